"""Input and output shapes of the webhook subscription API."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers import RangeDateField, RangeDateTimeField, StrictInputSerializer, TimestampField
from api.views import ListParams

from ..models import EVENT_TYPES, Delivery, DeliveryAttempt, Subscription
from ..services import MAX_DESCRIPTION, MAX_GRACE_SECONDS, MAX_RATE_LIMIT
from ..ssrf import MAX_URL_LENGTH


# The rules the service applies (webhooks.services._clean_url/_clean_events), stated for the schema; DNS and the
# addresses a name resolves to are the one part no schema can say.
@extend_schema_field({"type": "string", "format": "uri", "pattern": "^https://[^\\s@]+$", "maxLength": MAX_URL_LENGTH})
class SubscriptionUrlField(serializers.CharField):
    pass


@extend_schema_field({"type": "array", "items": {"type": "string", "enum": list(EVENT_TYPES)}, "minItems": 1,
                      "maxItems": len(EVENT_TYPES), "uniqueItems": True})
class EventTypesField(serializers.ListField):
    pass


@extend_schema_field({"type": ["array", "null"], "items": {"type": "string", "format": "uuid"}, "minItems": 1,
                      "uniqueItems": True})
class LocationIdsField(serializers.ListField):
    pass


LOCATION_IDS_HELP = (
    "The locations whose events it receives (a non-empty list of this organization's locations, no repeats); null "
    "or absent: the whole organization's, location-less events included (docs: Locations and scope)."
)


class SubscriptionSerializer(serializers.Serializer):
    id = serializers.CharField()
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.ChoiceField(choices=EVENT_TYPES))
    enabled = serializers.BooleanField()
    description = serializers.CharField()
    secret_preview = serializers.CharField(help_text="The first 8 characters of the signing secret.")
    rate_limit_per_second = serializers.IntegerField(
        allow_null=True, help_text="The most deliveries per second this endpoint gets (null: no cap)."
    )
    location_ids = serializers.ListField(child=serializers.UUIDField(), allow_null=True, help_text=LOCATION_IDS_HELP)
    created_at = TimestampField()
    updated_at = TimestampField()

    def to_representation(self, instance: Subscription):
        data = super().to_representation(instance)
        data["id"] = str(instance.pk)
        return data


class SubscriptionWithSecretSerializer(serializers.Serializer):
    """`{data, secret, warning}`: the create and rotate-secret responses, the only ones carrying the secret."""

    data = SubscriptionSerializer()
    secret = serializers.CharField(help_text="`whsec_` + base64 of 32 bytes. Shown once.")
    warning = serializers.CharField()


class SubscriptionCreateInput(StrictInputSerializer):
    """Shape only (types, a list of strings). The URL and event rules (https, DNS, known types, no repeats) are
    the service's: they run once, in `subscription_create`/`subscription_update`, and their ValidationFailed
    renders as the same 400 with `fieldErrors.url` / `fieldErrors.events`."""

    url = SubscriptionUrlField(
        trim_whitespace=False, help_text="https:// URL, <= 2048 characters, resolving only to public addresses."
    )
    events = EventTypesField(child=serializers.CharField(), help_text=f"Non-empty subset of {EVENT_TYPES}.")
    description = serializers.CharField(required=False, allow_blank=True, max_length=MAX_DESCRIPTION)
    enabled = serializers.BooleanField(required=False, default=True)
    rate_limit_per_second = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=MAX_RATE_LIMIT,
        help_text="At most this many deliveries per second to this endpoint, over any 10 s within 5% "
        "(1..1000; null or absent: no cap).",
    )
    # Shape only (a list of strings, or null); the rules (non-empty, no repeats, this organization's, within the
    # key's own locations) are the service's, as for url and events.
    location_ids = LocationIdsField(child=serializers.CharField(), required=False, allow_null=True,
                                    help_text=LOCATION_IDS_HELP)


class SubscriptionUpdateInput(SubscriptionCreateInput):
    enabled = serializers.BooleanField(required=False)


class RotateSecretInput(StrictInputSerializer):
    grace_period_seconds = serializers.IntegerField(
        required=False,
        default=0,
        min_value=0,
        max_value=MAX_GRACE_SECONDS,
        help_text="How long the old secret keeps signing too (0, the default: it stops at once).",
    )


class RecoverInput(StrictInputSerializer):
    since = RangeDateTimeField(help_text="Re-queue failed deliveries created since then (<= 30 days ago).")


class AttemptSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    at = TimestampField(source="created_at")
    trigger = serializers.ChoiceField(choices=DeliveryAttempt.Trigger.values)
    status_code = serializers.IntegerField(allow_null=True)
    duration_ms = serializers.IntegerField()
    response_body = serializers.CharField(help_text="The first 2 KB of the response body.")
    error = serializers.CharField()


class DeliverySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    event_id = serializers.CharField()
    event_type = serializers.CharField(source="event.type")
    status = serializers.ChoiceField(choices=Delivery.Status.values)
    attempt_count = serializers.IntegerField()
    next_attempt_at = TimestampField(allow_null=True)
    last_status_code = serializers.IntegerField(allow_null=True)
    last_error = serializers.CharField()
    created_at = TimestampField()
    updated_at = TimestampField()
    attempts = AttemptSerializer(many=True, source="attempts.all")


class RecoverResultSerializer(serializers.Serializer):
    requeued = serializers.IntegerField()


# --- the event feed, replay, test deliveries and the catalog ------------------------------------------------------


class EventFeedParams(ListParams):
    type = serializers.ChoiceField(choices=EVENT_TYPES, required=False)
    since = RangeDateTimeField(required=False, help_text="Events created at or after (ISO 8601).")
    until = RangeDateTimeField(required=False, help_text="Events created at or before (ISO 8601).")
    call_id = serializers.UUIDField(required=False, help_text="Only the events of this call.")

    def validate(self, attrs):
        if attrs.get("since") and attrs.get("until") and attrs["until"] < attrs["since"]:
            raise serializers.ValidationError({"until": ["Must not be before since."]})
        return attrs


class EventSerializer(serializers.Serializer):
    """The envelope exactly as delivered (parsed from the stored bytes; a receiver's credential redacted)."""

    id = serializers.CharField(help_text="`evt_` + 32 hex digits: the `webhook-id` of every delivery of it.")
    type = serializers.ChoiceField(choices=EVENT_TYPES)
    created_at = TimestampField()
    api_version = serializers.CharField()
    data = serializers.DictField(help_text="As the type's schema in GET /v1/event-types says.")


class EventDeliverySerializer(serializers.Serializer):
    subscription_id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=Delivery.Status.choices)
    attempts = serializers.IntegerField()
    last_attempt_at = TimestampField(allow_null=True)
    last_status_code = serializers.IntegerField(allow_null=True)


class EventWithDeliveriesSerializer(EventSerializer):
    deliveries = EventDeliverySerializer(many=True)


class EventTypeSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=EVENT_TYPES)
    description = serializers.CharField()
    schema = serializers.DictField(help_text="JSON Schema (2020-12) of the envelope, `data` fully specified.")


class ReplayInput(StrictInputSerializer):
    since = RangeDateTimeField(help_text="Events created at or after this (ISO 8601, <= 30 days ago).")
    until = RangeDateTimeField(required=False, help_text="Events created at or before this (default now).")
    types = EventTypesField(
        child=serializers.CharField(), required=False, allow_empty=False,
        help_text="Only these types (intersected with the subscription's); no repeats.",
    )


class ReplayResultSerializer(serializers.Serializer):
    queued = serializers.IntegerField()


class TestDeliveryInput(StrictInputSerializer):
    type = serializers.ChoiceField(choices=EVENT_TYPES, required=False, default="call.ended")


class TestCheckSerializer(serializers.Serializer):
    name = serializers.ChoiceField(choices=["valid", "bad_signature", "stale_timestamp"])
    status_code = serializers.IntegerField(allow_null=True)
    duration_ms = serializers.IntegerField()
    error = serializers.CharField(allow_null=True)
    response_excerpt = serializers.CharField()


class TestDeliveryResultSerializer(serializers.Serializer):
    verdict = serializers.ChoiceField(
        choices=["verifies_signatures", "accepts_invalid_signatures", "rejects_valid_signature", "unreachable"]
    )
    message = serializers.CharField()
    checks = TestCheckSerializer(many=True)


# --- endpoint statistics -------------------------------------------------------------------------------------------


class StatsErrorSerializer(serializers.Serializer):
    error = serializers.CharField(help_text="As the delivery log names it: `HTTP 503`, `Timeout: ...`, ...")
    count = serializers.IntegerField()


class StatsWindowSerializer(serializers.Serializer):
    attempts = serializers.IntegerField()
    succeeded = serializers.IntegerField()
    success_rate = serializers.FloatField(allow_null=True, help_text="0..1; null without attempts.")
    p50_ms = serializers.IntegerField(allow_null=True, help_text="Median response time (ms); null without attempts.")
    p95_ms = serializers.IntegerField(allow_null=True)
    top_errors = StatsErrorSerializer(many=True, help_text="The 5 most frequent errors, most frequent first.")


class StatsWindowsSerializer(serializers.Serializer):
    def get_fields(self):
        # "24h" and "7d" are not Python identifiers.
        return {"24h": StatsWindowSerializer(), "7d": StatsWindowSerializer()}


class StatsWaitingSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Deliveries waiting for an attempt (pending).")
    oldest_created_at = TimestampField(allow_null=True)
    oldest_age_seconds = serializers.FloatField(allow_null=True)


class StatsSlowedSerializer(serializers.Serializer):
    active = serializers.BooleanField(help_text="Whether fair delivery has slowed this endpoint down now.")
    reason = serializers.CharField(help_text="Why (a timeout, a refused connection, a 429); empty when not.")
    since = TimestampField(allow_null=True)
    in_flight_limit = serializers.IntegerField(help_text="Deliveries to it in flight at once at most, now.")
    paused_until = TimestampField(allow_null=True, help_text="A 429's Retry-After: nothing is sent before then.")


class SubscriptionStatsSerializer(serializers.Serializer):
    windows = StatsWindowsSerializer()
    waiting = StatsWaitingSerializer()
    slowed_down = StatsSlowedSerializer()


class ReconciliationParams(serializers.Serializer):
    date = RangeDateField(input_formats=["%Y-%m-%d"], help_text="A UTC day, YYYY-MM-DD.")

    def to_internal_value(self, data):
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({name: ["Unknown query parameter."] for name in unknown})
        return super().to_internal_value(data)


class ReconciliationSerializer(serializers.Serializer):
    """The events due to the subscription that were created on `date` (UTC): how many, the SHA-256 of their sorted
    ids (docs/webhooks.md#reconciliation), and their deliveries by status."""

    date = serializers.DateField()
    event_count = serializers.IntegerField()
    event_ids_sha256 = serializers.CharField(help_text="Hex SHA-256 of the sorted event ids joined by \\n.")
    delivered = serializers.IntegerField()
    pending = serializers.IntegerField()
    failed = serializers.IntegerField()
