"""Shapes of /v1/privacy (docs/privacy.md#retention-and-erasure)."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers import StrictInputSerializer, TimestampField
from core.timefmt import iso_ms

from ..models import MAX_DAYS, MIN_DAYS, ErasureRequest

DAYS_HELP = f"Days after a call's start, {MIN_DAYS} to {MAX_DAYS}; null keeps."


class LocationRetentionSerializer(serializers.Serializer):
    location_id = serializers.UUIDField()
    recordings_days = serializers.IntegerField(allow_null=True, help_text=DAYS_HELP)
    transcripts_days = serializers.IntegerField(allow_null=True, help_text=DAYS_HELP)


class RetentionSerializer(serializers.Serializer):
    recordings_days = serializers.IntegerField(allow_null=True, help_text=DAYS_HELP)
    transcripts_days = serializers.IntegerField(allow_null=True, help_text=DAYS_HELP + " Covers the transcript, "
                                                "summary and every text quoting the caller (calls' `content`).")
    locations = LocationRetentionSerializer(many=True, help_text="Each in place of the organization's days for that "
                                            "location's calls.")


_DAYS_SCHEMA = {"type": "integer", "minimum": MIN_DAYS, "maximum": MAX_DAYS}  # allow_null adds null where it is used
_NULLABLE_DAYS_SCHEMA = {**_DAYS_SCHEMA, "type": ["integer", "null"]}


@extend_schema_field({"type": "array", "items": {
    "type": "object", "required": ["location_id"], "additionalProperties": False,
    "properties": {"location_id": {"type": "string", "format": "uuid"}, "recordings_days": _NULLABLE_DAYS_SCHEMA,
                   "transcripts_days": _NULLABLE_DAYS_SCHEMA}}})
class _LocationsInput(serializers.ListField):
    """Objects checked by the service (every problem at once, under `locations`); the schema states their shape."""


@extend_schema_field(_DAYS_SCHEMA)
class _DaysInput(serializers.IntegerField):
    """Any integer here (the service's one message for a range, the same from the dashboard); the schema states it."""


class RetentionInputSerializer(StrictInputSerializer):
    # Ranges are the service's to check (one message, the same from the dashboard); the types are checked here.
    recordings_days = _DaysInput(allow_null=True, required=False)
    transcripts_days = _DaysInput(allow_null=True, required=False)
    locations = _LocationsInput(child=serializers.DictField(), required=False,
                                help_text="Replaces every location's entry.")


class ErasureRequestInputSerializer(StrictInputSerializer):
    partial_on_patch = False
    phone_number = serializers.CharField(required=False, max_length=32, help_text="Exactly one of this and "
                                         "`contact_id`.")
    contact_id = serializers.CharField(required=False, max_length=64)
    suppress = serializers.BooleanField(required=False, default=False, help_text="Also keep no content of this "
                                        "number's later calls.")


class ConfirmationSerializer(serializers.Serializer):
    subscription_id = serializers.UUIDField()
    delivered_at = TimestampField(allow_null=True, help_text="When the subscriber acknowledged `contact.erased` with "
                                  "a 2xx; null until then.")


class CountsSerializer(serializers.Serializer):
    calls = serializers.IntegerField()
    contacts = serializers.IntegerField()
    bookings = serializers.IntegerField()
    followups = serializers.IntegerField()


class ErasureRequestSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=ErasureRequest.Status.choices)
    phone_number_masked = serializers.CharField(help_text="The country code and the last four digits; the number "
                                                "itself is never stored.")
    contact_id = serializers.UUIDField(allow_null=True)
    suppress = serializers.BooleanField()
    counts = CountsSerializer(allow_null=True, help_text="What it deleted; null until completed.")
    subscriptions = ConfirmationSerializer(many=True, help_text="The subscriptions `contact.erased` went to.")
    created_at = TimestampField()
    completed_at = TimestampField(allow_null=True)


def erasure_request_data(request: ErasureRequest, confirmations: list) -> dict:
    return {
        "id": str(request.pk),
        "status": request.status,
        "phone_number_masked": request.phone_number_masked,
        "contact_id": str(request.contact_id) if request.contact_id else None,
        "suppress": request.suppress,
        "counts": request.counts or None,
        "subscriptions": [{"subscription_id": str(row["subscription_id"]), "delivered_at": iso_ms(row["delivered_at"])}
                          for row in confirmations],
        "created_at": iso_ms(request.created_at),
        "completed_at": iso_ms(request.completed_at),
    }


class SuppressionSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    phone_number_masked = serializers.CharField()
    erasure_request_id = serializers.UUIDField(allow_null=True)
    created_at = TimestampField()

    def to_representation(self, row):
        return {"id": str(row.pk), "phone_number_masked": row.phone_number_masked,
                "erasure_request_id": str(row.erasure_request_id) if row.erasure_request_id else None,
                "created_at": iso_ms(row.created_at)}
