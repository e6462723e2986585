"""Output shapes of /v1/calls (docs/api.md#calls, #recordings) and the order-status input.

The declared fields document the shapes (the OpenAPI schema); the bodies themselves come from calls.payloads, which
the agent runtime answers with too. Tests pin that both agree.
"""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers import OutputModelSerializer, StrictInputSerializer, TimestampField
from calls import payloads
from calls.models import Call, ContentDeletedReason, OrderStatus
from calls.selectors import call_order, call_recording
from knowledge.models import CallField


class TranscriptTurnSerializer(serializers.Serializer):
    speaker = serializers.ChoiceField(choices=["agent", "caller"])
    text = serializers.CharField()
    offset_seconds = serializers.FloatField()


class QualityCheckSerializer(serializers.Serializer):
    name = serializers.CharField()
    verdict = serializers.ChoiceField(choices=["pass", "fail", "not_applicable"])
    evidence = serializers.ListField(child=serializers.CharField(), help_text="Quoted transcript strings.")
    gap_type = serializers.CharField(allow_null=True)
    verification = serializers.ChoiceField(choices=["verified", "unverified"])


class ModifierSerializer(serializers.Serializer):
    group_id = serializers.UUIDField()
    group_name = serializers.CharField()
    option_name = serializers.CharField()
    price_cents = serializers.IntegerField()


class AnswerSerializer(serializers.Serializer):
    question_id = serializers.UUIDField()
    prompt = serializers.CharField()
    answer = serializers.CharField()


class OrderItemSerializer(serializers.Serializer):
    catalog_item_id = serializers.UUIDField()
    name = serializers.CharField()
    quantity = serializers.IntegerField()
    modifiers = ModifierSerializer(many=True)
    answers = AnswerSerializer(many=True)
    unit_price_cents = serializers.IntegerField()
    line_total_cents = serializers.IntegerField()


class OrderSerializer(serializers.Serializer):
    """The `call.ended` order object plus `order_status` (and `call_id`, for the order-status response)."""

    call_id = serializers.UUIDField()
    order_status = serializers.ChoiceField(choices=OrderStatus.choices)
    call_order_number = serializers.IntegerField()
    profile_id = serializers.UUIDField()
    profile_name = serializers.CharField()
    items = OrderItemSerializer(many=True)
    order_answers = AnswerSerializer(many=True)
    subtotal_cents = serializers.IntegerField()
    total_cents = serializers.IntegerField()
    fulfillment_estimate_value = serializers.FloatField()
    fulfillment_estimate_unit = serializers.CharField()
    fulfillment_estimate_label = serializers.CharField(allow_null=True)
    fulfillment_varies = serializers.BooleanField()
    expected_fulfillment_at = TimestampField()
    cancellation_allowed = serializers.BooleanField()
    cancellation_window_value = serializers.FloatField()
    cancellation_window_unit = serializers.CharField()
    cancellation_deadline_at = TimestampField()
    placed_at = TimestampField()
    canceled_at = TimestampField(allow_null=True)
    canceled_by = serializers.CharField(allow_null=True)
    payment_status = serializers.CharField(allow_null=True)
    external_order_id = serializers.CharField(allow_null=True)
    payment_collected_at = TimestampField(allow_null=True)

    def to_representation(self, order):
        # The same builder as the event, so the API and `call.ended` never disagree on a field.
        return payloads.order_detail_data(order)


class RedactionSerializer(serializers.Serializer):
    detector_version = serializers.CharField(
        allow_null=True, help_text="The detector that redacted this call's text; null: stored before redaction "
        "existed and not redacted since (`manage.py redact_stored_calls`).")
    counts = serializers.DictField(
        child=serializers.IntegerField(), help_text="Detections replaced by `[kind]`, per kind "
        "(card_number, government_id, bank_account, email, phone_number, date_of_birth); a card with its expiry "
        "and security code counts once.")
    recording_withheld = serializers.BooleanField(
        help_text="The recording was not kept: a card, government id or bank account number was heard.")


class CallSerializer(OutputModelSerializer):
    """A call list item."""

    location_id = serializers.UUIDField(allow_null=True)
    contact_id = serializers.UUIDField(allow_null=True)
    outcome_tags = serializers.ListField(child=serializers.CharField())
    trail = serializers.ListField(child=serializers.CharField())
    has_recording = serializers.SerializerMethodField()
    order_status = serializers.SerializerMethodField()
    redaction = RedactionSerializer(help_text="What was redacted from this call's text (docs: Privacy).")
    content_deleted_at = TimestampField(allow_null=True, help_text="When the call's content (transcript, summary, "
                                        "quotes...) was deleted; null while it is kept. docs/privacy.md.")
    content_deleted_reason = serializers.ChoiceField(choices=ContentDeletedReason.choices, allow_null=True,
                                                     help_text="`retention`, `request` or `erasure`; null while "
                                                     "the content is kept.")

    class Meta:
        model = Call
        fields = [
            "id", "location_id", "contact_id", "started_at", "ended_at", "duration_seconds", "direction",
            "from_number", "disposition", "classification", "scorable", "score", "summary", "outcome",
            "outcome_tags", "trail", "has_recording", "order_status", "status", "redaction", "content_deleted_at",
            "content_deleted_reason",
        ]

    def get_has_recording(self, call) -> bool:
        return call_recording(call) is not None

    def get_order_status(self, call) -> str | None:
        order = call_order(call)
        return order.status if order is not None else None

    def to_representation(self, call):
        # Built directly (calls.payloads), for speed; the fields above still define the documented shape.
        return payloads.call_data(call)


class FactUsedSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    label = serializers.CharField(help_text="The fact's label when the call ended.")


class CallFieldValueSerializer(serializers.Serializer):
    label = serializers.CharField(help_text="The call field's label when the call ended.")
    type = serializers.ChoiceField(choices=CallField.Type.choices)
    value = serializers.JSONField(help_text="A string, number or boolean, of the field's type; a date is YYYY-MM-DD.")
    evidence = serializers.CharField(allow_null=True, help_text="The quote of the transcript; null when none was "
                                     "given or the transcript does not say it.")
    evidence_verified = serializers.BooleanField(help_text="True when the quote appears in the transcript.")


class CallDetailSerializer(CallSerializer):
    transcript = TranscriptTurnSerializer(many=True)
    quality_checks = QualityCheckSerializer(many=True)
    order = serializers.SerializerMethodField()
    knowledge_version = serializers.IntegerField(allow_null=True, help_text="The version the agent answered from.")
    facts_used = FactUsedSerializer(many=True, help_text="The facts the agent relied on, as they were then.")
    unanswered_questions = serializers.ListField(child=serializers.CharField(),
                                                 help_text="What callers asked that the agent could not answer.")
    fields = serializers.DictField(child=CallFieldValueSerializer(), help_text="The organization's call fields as "
                                   "the agent heard them, keyed by each field's name when the call ended.")

    class Meta(CallSerializer.Meta):
        fields = [*CallSerializer.Meta.fields, "transcript", "quality_checks", "order", "knowledge_version",
                  "facts_used", "unanswered_questions", "fields"]

    def to_representation(self, call):
        return payloads.call_detail_data(call)

    @extend_schema_field(OrderSerializer(allow_null=True))
    def get_order(self, call):
        order = call_order(call)
        if call.outcome != "order" or order is None:
            return None
        return OrderSerializer(order).data


class RecordingSerializer(serializers.Serializer):
    url = serializers.URLField(help_text="Minted on this request; valid for one hour. Never carried in an event.")
    expires_at = TimestampField()
    content_type = serializers.CharField()
    duration_seconds = serializers.IntegerField(allow_null=True)


class OrderStatusInputSerializer(StrictInputSerializer):
    partial_on_patch = False
    status = serializers.ChoiceField(choices=OrderStatus.choices)
