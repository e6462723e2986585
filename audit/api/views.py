"""/v1/audit-events: the organization's audit trail, for keys with the `audit` scope only."""

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import Throttled

from api.docs import envelope, error_responses, list_envelope
from api.views import OrgAPIView, data_response, list_response
from audit import chain, selectors, tasks
from audit.models import AuditEvent, AuditVerification
from core.errors import Conflict
from orgs.tenancy import ScopeForbidden, location_ids_of

from .serializers import (
    AuditEventListParams,
    AuditEventSerializer,
    AuditVerificationSerializer,
    AuditVerifySerializer,
    SignedHeadSerializer,
)

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
        summary="Verify the audit chain (incrementally)",
        description="Seals pending entries (one batch), then checks the entries after the organization's checkpoint "
        "(where earlier checks stopped), at most `AUDIT_VERIFY_MAX_ENTRIES`, and moves the checkpoint: each "
        "entry's position, link, hash and MACs. `first_broken_id` names the first that fails (null when intact, or "
        "when only the newest entries are missing). More unverified than the bound: `complete` false and `intact` "
        "null (ask again, or start a verification job). Entries before the checkpoint are re-checked only by a "
        "verification job. One per organization at a time: another while one runs is 429 `rate_limited` with "
        "Retry-After." + SCOPE_NOTE,
        responses={200: envelope(AuditVerifySerializer), **error_responses(403, 429)},
        tags=["Audit"],
    )
    def get(self, request):
        try:
            return data_response(chain.verify_recent(self.org.pk))
        except chain.VerificationBusy:
            raise Throttled(wait=1) from None


class AuditVerificationListView(AuditAPIView):
    @extend_schema(
        operation_id="audit_verifications_create",
        summary="Start a full verification of the audit chain",
        description="Queues a job that re-checks every kept entry (a worker reads the chain in batches) and answers "
        "202 with it; poll `GET /v1/audit-events/verifications/{id}` until `status` is `succeeded` (its `result`) or "
        "`failed`. At the end it moves the organization's checkpoint: to the head it checked when intact, back to "
        "just before the break when not (so `verify` reports it too). One at a time per organization: while one "
        "is queued or running, 409 `conflict` with `details.field` = `verification` and `details.id` the running "
        "job's id." + SCOPE_NOTE,
        request=None,
        responses={202: envelope(AuditVerificationSerializer), **error_responses(403, 409)},
        tags=["Audit"],
    )
    def post(self, request):
        try:
            job = chain.verification_start(org_id=self.org.pk,
                                           stale_after_seconds=settings.AUDIT_VERIFICATION_STALE_SECONDS)
        except chain.VerificationRunning as running:
            conflict = Conflict("verification", "A verification of this organization is running.")
            conflict.details["id"] = str(running.job.id) if running.job is not None else None
            raise conflict from None
        tasks.run_verification_after_commit(job.id)
        return data_response(selectors.verification_data(job), status=202)


class AuditVerificationDetailView(AuditAPIView):
    model = AuditVerification

    @extend_schema(
        operation_id="audit_verifications_retrieve",
        summary="Get a verification job",
        parameters=[OpenApiParameter("id", OpenApiTypes.UUID, OpenApiParameter.PATH,
                                     description="The job id. Another organization's id is 404.")],
        responses={200: envelope(AuditVerificationSerializer), **error_responses(403, 404)},
        tags=["Audit"],
    )
    def get(self, request, id):
        return data_response(selectors.verification_data(self.get_object(id)))


class AuditHeadView(AuditAPIView):
    @extend_schema(
        operation_id="audit_events_head",
        summary="Get the signed head of the audit chain",
        description="The chain's head (its last sealed position, hash and entry) signed with the platform's Ed25519 "
        "key: keep it outside the platform, and later check that the entry it names still has that hash and "
        "position (docs/api.md#audit-trail, \"Signed heads\"). A head whose entry does not hold is not signed: 409 "
        "`conflict` with `details.field` = `chain`." + SCOPE_NOTE,
        responses={200: envelope(SignedHeadSerializer), **error_responses(403, 409)},
        tags=["Audit"],
    )
    def get(self, request):
        try:
            return data_response(chain.signed_head(self.org.pk))
        except chain.HeadBroken:
            raise Conflict("chain", "The chain's head does not hold; verify the chain.") from None


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
