"""/v1/audit-events: the organization's audit trail, for keys with the `audit` scope only."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema

from audit import chain, selectors
from audit.models import AuditEvent
from core.api.docs import envelope, error_responses, list_envelope
from core.api.views import OrgAPIView, data_response, list_response
from core.tenancy import ScopeForbidden, location_ids_of

from .serializers import AuditEventListParams, AuditEventSerializer, AuditVerifySerializer

SCOPE_NOTE = (" Needs a key with the `audit` scope (`read` alone gets 403 `insufficient_scope`, `required: audit`)"
              " and without `location_ids` (403 `forbidden`: the trail is the whole organization's).")


class AuditAPIView(OrgAPIView):
    required_scope = "audit"
    model = AuditEvent

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        # Entries name rows of every location and the organization's own settings: not a location's to read.
        if (location_ids := location_ids_of(self.org)) is not None:
            raise ScopeForbidden("the audit trail", location_ids, verb="read")


class AuditEventListView(AuditAPIView):
    @extend_schema(
        operation_id="audit_events_list",
        summary="List audit entries",
        description="Newest first; cursor-paginated like every list. Filters: `action` (exact, or a prefix ending "
        "in `.`), `actor_id`, `target_id`, `since`, `until` (inclusive). Unknown parameters, an unknown action and "
        "a malformed time are 400." + SCOPE_NOTE,
        parameters=[AuditEventListParams],
        responses={200: list_envelope(AuditEventSerializer), **error_responses(400, 403)},
        tags=["Audit"],
    )
    def get(self, request):
        params = self.validate_query(AuditEventListParams)
        filters = {name: params.get(name) for name in ("action", "actor_id", "target_id", "since", "until")}
        rows, has_more, next_cursor = selectors.audit_event_page(
            selectors.audit_event_list(org=self.org, **filters), limit=params["limit"], cursor=params.get("cursor")
        )
        return list_response([selectors.entry_data(row) for row in rows], has_more, next_cursor)


class AuditEventVerifyView(AuditAPIView):
    @extend_schema(
        operation_id="audit_events_verify",
        summary="Verify the audit chain",
        description="Seals pending entries, then checks every entry's position, link and hash from the oldest kept "
        "to the newest: `first_broken_id` names the first that fails (null when intact, or when only the newest "
        "entries are missing)." + SCOPE_NOTE,
        responses={200: envelope(AuditVerifySerializer), **error_responses(403)},
        tags=["Audit"],
    )
    def get(self, request):
        return data_response(chain.verify(self.org.pk))


class AuditEventDetailView(AuditAPIView):
    @extend_schema(
        operation_id="audit_events_retrieve",
        summary="Get an audit entry",
        parameters=[OpenApiParameter("id", OpenApiTypes.UUID, OpenApiParameter.PATH,
                                     description="The entry id. Another organization's id is 404.")],
        responses={200: envelope(AuditEventSerializer), **error_responses(403, 404)},
        tags=["Audit"],
    )
    def get(self, request, id):
        return data_response(selectors.entry_data(self.get_object(id)))
