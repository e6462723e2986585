"""The meetings runtime's side of the internal API (under /internal/agent/v1/, service token, not an org key).

POST /internal/agent/v1/orgs/{org_id}/meetings
    {"runtime_meeting_id": str, "title": str|null, "started_at": ts, "ended_at"?: ts|null,
     "outcome": {"summary", "tickets", "decisions", "open_questions", "action_items", "schema_version"}}
    201 {"data": {"meeting_id", "outcome_id", "runtime_meeting_id", "created": true}} on the first post;
    200 with the same ids and "created": false on a repeat of the same runtime_meeting_id.
    401 {"error": "unauthorized"} without the service token; 404 for an unknown org; 400 "Validation failed".
"""

import uuid

from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from calls.runtime.authentication import IsRuntime, RuntimeTokenAuthentication
from orgs.models import Organization
from voiceagent.errors import NotFound, ValidationFailed

from ..services import meeting_ingest

INGEST_FIELDS = ("runtime_meeting_id", "title", "started_at", "ended_at", "outcome")
REQUIRED = ("runtime_meeting_id", "title", "started_at", "outcome")


def _timestamp(value, name: str, errors: dict):
    if value is None:
        return None
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None or parsed.tzinfo is None:
        errors[name] = ["Expected an ISO 8601 timestamp with a time zone."]
    return parsed


class RuntimeAPIView(APIView):
    """The agent runtime's service token (the calls runtime's authentication, reused as is) first and alone; no
    per-key rate limit (the runtime is ours)."""

    authentication_classes = [RuntimeTokenAuthentication]
    permission_classes = [IsRuntime]
    throttle_classes = []

    def org_from_path(self, org_id) -> Organization:
        org = Organization.objects.filter(pk=org_id).first()
        if org is None:
            raise NotFound()
        return org


class MeetingIngestView(RuntimeAPIView):
    @extend_schema(exclude=True)
    def post(self, request, org_id: uuid.UUID):
        org = self.org_from_path(org_id)
        body = request.data
        if not isinstance(body, dict):
            raise ValidationFailed(form_errors=["Expected a JSON object."])
        unknown = sorted(set(body) - set(INGEST_FIELDS))
        if unknown:
            raise ValidationFailed(form_errors=[f"Unrecognized key(s) in object: {', '.join(map(repr, unknown))}"])
        errors = {name: ["This field is required."] for name in REQUIRED if name not in body}
        started_at = _timestamp(body.get("started_at"), "started_at", errors) if "started_at" in body else None
        if "started_at" in body and body["started_at"] is None:
            errors["started_at"] = ["This field may not be null."]
        ended_at = _timestamp(body.get("ended_at"), "ended_at", errors)
        if errors:
            raise ValidationFailed(field_errors=errors)
        meeting, outcome, created = meeting_ingest(
            org=org,
            runtime_meeting_id=body["runtime_meeting_id"],
            title=body["title"],
            started_at=started_at,
            ended_at=ended_at,
            outcome=body["outcome"],
        )
        data = {
            "meeting_id": str(meeting.pk),
            "outcome_id": str(outcome.pk),
            "runtime_meeting_id": meeting.runtime_meeting_id,
            "created": created,
        }
        return Response({"data": data}, status=201 if created else 200)
