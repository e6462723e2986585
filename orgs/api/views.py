"""/v1 views of the organization: the key's identity. Thin: validate, call, render."""

from drf_spectacular.utils import extend_schema

from api.docs import envelope, error_responses
from api.views import OrgAPIView, data_response

from .serializers import IdentitySerializer


class MeView(OrgAPIView):
    @extend_schema(
        operation_id="me",
        summary="The key's identity",
        description="The organization and key that authenticated this request, with the key's scopes and the "
                    "locations it is limited to (`location_ids`; null: the whole organization), and the "
                    "organization's time zone (`time_zone`: what its days are in, never its timestamps).",
        responses={200: envelope(IdentitySerializer), **error_responses(401, 429)},
        tags=["Identity"],
    )
    def get(self, request):
        # The hottest endpoint: a plain dict (IdentitySerializer documents the shape) spares DRF's field machinery.
        key = self.api_key
        return data_response(
            {
                "org_id": str(key.organization.id),
                "org_name": key.organization.name,
                "time_zone": key.organization.time_zone,
                "key_id": str(key.id),
                "key_name": key.name,
                "key_prefix": key.key_prefix,
                "scopes": key.scopes,
                "location_ids": None if key.location_ids is None else [str(pk) for pk in key.location_ids],
            }
        )
