"""/v1/privacy: the retention policy (read and write scopes), erasure requests and suppressions (the `privacy` scope
too). All of them the whole organization's: a key limited to locations gets 403 `forbidden`. Thin views."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from api.docs import envelope, error_responses, list_envelope
from api.views import ListParams, OrgAPIView, data_response, list_response, paginate
from orgs.tenancy import ScopeForbidden, location_ids_of

from .. import selectors, services
from ..models import ErasureRequest, Suppression
from .serializers import (
    ErasureRequestInputSerializer,
    ErasureRequestSerializer,
    RetentionInputSerializer,
    RetentionSerializer,
    SuppressionSerializer,
    erasure_request_data,
)

ID_PARAMETER = OpenApiParameter("id", OpenApiTypes.UUID, OpenApiParameter.PATH,
                                description="Another organization's id is 404.")
ORG_WIDE = " A key limited to locations gets 403 `forbidden`: this is the whole organization's."
PRIVACY_SCOPE = (" Needs a key with the `privacy` scope besides the method's (`read`, or `write` to change): 403 "
                 "`insufficient_scope` with `required: privacy` otherwise.")


class _OrgWideView(OrgAPIView):
    what = "privacy settings"

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if (location_ids := location_ids_of(self.org)) is not None:
            raise ScopeForbidden(self.what, location_ids, verb="read" if request.method == "GET" else "changed")


class _PrivacyView(_OrgWideView):
    also_required_scope = "privacy"


class RetentionView(_OrgWideView):
    what = "the retention policy"

    @extend_schema(
        operation_id="privacy_retention_retrieve",
        summary="Get the retention policy",
        description="How long calls keep their recording and their transcript (with every text quoting the "
        "caller): days after the call's start, null to keep. A location's entry replaces the organization's for "
        "that location's calls. A new organization starts at 90 days (recordings) and 365 (transcripts)." + ORG_WIDE,
        responses={200: envelope(RetentionSerializer), **error_responses(403)},
        tags=["Privacy"],
    )
    def get(self, request):
        return data_response(RetentionSerializer(selectors.retention_get(org=self.org)).data)

    @extend_schema(
        operation_id="privacy_retention_update",
        summary="Change the retention policy",
        description="Any of `recordings_days`, `transcripts_days` (1 to 3,650, or null to keep) and `locations` "
        "(replaces every location's entry: `[{location_id, recordings_days, transcripts_days}]`). Audited "
        "(`retention.updated`). The daily purge applies it; `manage.py purge_expired_content` at once." + ORG_WIDE,
        request=RetentionInputSerializer,
        responses={200: envelope(RetentionSerializer), **error_responses(400, 403)},
        tags=["Privacy"],
    )
    def patch(self, request):
        data = self.validate_body(RetentionInputSerializer)
        return data_response(RetentionSerializer(services.retention_update(org=self.org, **data)).data)


class ErasureRequestListView(_PrivacyView):
    what = "erasure requests"

    @extend_schema(
        operation_id="privacy_erasure_requests_list",
        summary="List erasure requests",
        description="Newest first, cursor-paginated. Each with its status, counts and which subscribers "
        "acknowledged `contact.erased`." + PRIVACY_SCOPE + ORG_WIDE,
        parameters=[ListParams],
        responses={200: list_envelope(ErasureRequestSerializer), **error_responses(400, 403)},
        tags=["Privacy"],
    )
    def get(self, request):
        params = self.validate_query(ListParams)
        rows, has_more, next_cursor = paginate(selectors.erasure_request_list(org=self.org), params,
                                               scope="erasure-requests")
        confirmations = selectors.erasure_confirmations(rows)
        return list_response([erasure_request_data(row, confirmations[row.pk]) for row in rows], has_more,
                             next_cursor)

    @extend_schema(
        operation_id="privacy_erasure_requests_create",
        summary="Erase a caller",
        description="`{\"phone_number\": ...}` or `{\"contact_id\": ...}` (exactly one), and `suppress`. 202 with "
        "the request, `pending`; a worker then deletes the contact, the content of every call from the number or "
        "linked to the contact (clearing their `from_number`), the caller's details in bookings and follow-ups "
        "and in every stored event body, and sends `contact.erased` to every subscription that gets contact or "
        "call events. The number is kept only as a keyed digest. `suppress: true` keeps no content of the "
        "number's later calls. An unknown contact is 404." + PRIVACY_SCOPE + ORG_WIDE,
        request=ErasureRequestInputSerializer,
        responses={202: envelope(ErasureRequestSerializer), **error_responses(400, 403, 404)},
        tags=["Privacy"],
    )
    def post(self, request):
        data = self.validate_body(ErasureRequestInputSerializer)
        erasure = services.erasure_request_create(org=self.org, **data)
        return data_response(erasure_request_data(erasure, []), status=202)


class ErasureRequestDetailView(_PrivacyView):
    what = "erasure requests"
    model = ErasureRequest

    @extend_schema(
        operation_id="privacy_erasure_requests_retrieve",
        summary="Get an erasure request",
        description="Its status (`pending`, `running`, `completed`), counts and subscriber confirmations."
        + PRIVACY_SCOPE + ORG_WIDE,
        parameters=[ID_PARAMETER],
        responses={200: envelope(ErasureRequestSerializer), **error_responses(403, 404)},
        tags=["Privacy"],
    )
    def get(self, request, id):
        erasure = selectors.erasure_request_get(org=self.org, request_id=id)
        return data_response(erasure_request_data(erasure, selectors.erasure_confirmations([erasure])[erasure.pk]))


class SuppressionListView(_PrivacyView):
    what = "suppressions"

    @extend_schema(
        operation_id="privacy_suppressions_list",
        summary="List suppressed numbers",
        description="Numbers whose calls keep no content (masked; the number itself is never stored)."
        + PRIVACY_SCOPE + ORG_WIDE,
        parameters=[ListParams],
        responses={200: list_envelope(SuppressionSerializer), **error_responses(400, 403)},
        tags=["Privacy"],
    )
    def get(self, request):
        params = self.validate_query(ListParams)
        rows, has_more, next_cursor = paginate(selectors.suppression_list(org=self.org), params,
                                               scope="suppressions")
        return list_response(SuppressionSerializer(rows, many=True).data, has_more, next_cursor)


class SuppressionDetailView(_PrivacyView):
    what = "suppressions"
    model = Suppression

    @extend_schema(
        operation_id="privacy_suppressions_delete",
        summary="Take a number off the suppression list",
        description="Its later calls keep their content again. 204. Audited." + PRIVACY_SCOPE + ORG_WIDE,
        parameters=[ID_PARAMETER],
        responses={204: None, **error_responses(403, 404)},
        tags=["Privacy"],
    )
    def delete(self, request, id):
        services.suppression_delete(suppression=selectors.suppression_get(org=self.org, suppression_id=id))
        return Response(status=204)
