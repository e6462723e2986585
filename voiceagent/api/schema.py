"""drf-spectacular extension: documents the key authenticator as an HTTP bearer scheme."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "voiceagent.api.authentication.ApiKeyAuthentication"
    name = "bearerKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API key `va_live_` + 32 alphanumerics, created in the dashboard "
            "(Settings, API keys). The scheme word `Bearer` is case-sensitive; keys in query strings "
            "or bodies never authenticate.",
        }
