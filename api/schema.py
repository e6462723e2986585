"""drf-spectacular extensions: the key authenticator as an HTTP bearer scheme, and request bodies as strict as the
serializers that read them."""

from drf_spectacular import openapi
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import force_instance


class AutoSchema(openapi.AutoSchema):
    """A PATCH body is partial in the schema only when the serializer lets it be (`partial_on_patch`)."""

    def _get_request_for_media_type(self, serializer, direction="request"):
        if self.method == "PATCH" and not getattr(force_instance(serializer), "partial_on_patch", True):
            self.method = "PUT"  # drf-spectacular marks a PATCH body partial by its method alone
            try:
                return super()._get_request_for_media_type(serializer, direction)
            finally:
                self.method = "PATCH"
        return super()._get_request_for_media_type(serializer, direction)


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.ApiKeyAuthentication"
    name = "bearerKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API key `va_live_` + 32 alphanumerics, created in the dashboard "
            "(Settings, API keys). The scheme word `Bearer` is case-sensitive; keys in query strings "
            "or bodies never authenticate.",
        }
