"""Request shape of the meetings runtime's ingestion (POST /internal/agent/v1/orgs/{org_id}/meetings).

Strict (api.serializers.StrictInputSerializer): an unknown key or a body that is not an object goes in
`formErrors`, a bad field in `fieldErrors` under its name. `meeting_ingest` checks the same rules again (it also
serves `simulate_meeting`); the outcome itself is validated by meetings.validation, whose dotted paths
(`outcome.tickets.0.title`) the API reports under `outcome`, the path leading the message (api.errors).
"""

from django.utils import timezone
from rest_framework import serializers

from api.serializers import StrictInputSerializer
from meetings.validation import NAME

TIMESTAMP_MESSAGE = "Expected an ISO 8601 timestamp with a time zone."


class AwareDateTimeField(serializers.DateTimeField):
    """ISO 8601 with an explicit offset. An impossible date (2026-02-30) or a naive time is a field error: DRF's
    field would read a naive time in the server's zone, which is a guess about the sender."""

    default_error_messages = {"invalid": TIMESTAMP_MESSAGE, "date": TIMESTAMP_MESSAGE, "naive": TIMESTAMP_MESSAGE}

    def __init__(self, **kwargs):
        super().__init__(input_formats=["iso-8601"], **kwargs)

    def enforce_timezone(self, value):
        if timezone.is_naive(value):
            self.fail("naive")
        return super().enforce_timezone(value)


class MeetingIngestSerializer(StrictInputSerializer):
    runtime_meeting_id = serializers.CharField(max_length=NAME)
    title = serializers.CharField(max_length=NAME, allow_null=True, allow_blank=True)
    started_at = AwareDateTimeField()
    ended_at = AwareDateTimeField(allow_null=True, required=False, default=None)
    # Any JSON here: meeting_ingest answers a repeat before it looks at the outcome, then validates it strictly.
    outcome = serializers.JSONField()
