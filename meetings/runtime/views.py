"""The meetings runtime's side of the internal API (under /internal/agent/v1/, service token, not an org key).

POST /internal/agent/v1/orgs/{org_id}/meetings
    {"runtime_meeting_id": str, "title": str|null, "started_at": ts, "ended_at"?: ts|null,
     "outcome": {"summary", "tickets", "decisions", "open_questions", "action_items", "schema_version"}}
    201 {"data": {"meeting_id", "outcome_id", "runtime_meeting_id", "created": true}} on the first post;
    200 with the same ids and "created": false on a repeat of the same runtime_meeting_id.
    401 {"error": "unauthorized"} without the service token; 404 for an unknown org; 400 "Validation failed".
"""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from api.runtime.views import RuntimeAPIView
from meetings.services import meeting_ingest

from .serializers import MeetingIngestSerializer


class MeetingIngestView(RuntimeAPIView):
    """The runtime's base view (token first and alone, then the org from the path), as the calls runtime's."""

    @extend_schema(exclude=True)
    def post(self, request, org_id):
        data = self.validate_body(MeetingIngestSerializer)
        meeting, outcome, created = meeting_ingest(
            org=self.org,
            runtime_meeting_id=data["runtime_meeting_id"],
            title=data["title"],
            started_at=data["started_at"],
            ended_at=data["ended_at"],
            outcome=data["outcome"],
        )
        data = {
            "meeting_id": str(meeting.pk),
            "outcome_id": str(outcome.pk),
            "runtime_meeting_id": meeting.runtime_meeting_id,
            "created": created,
        }
        return Response({"data": data}, status=201 if created else 200)
