"""Request shapes of the agent runtime API. Strict: an unknown key is a 400, so a runtime bug shows at once."""

from rest_framework import serializers

from api.serializers import StrictInputSerializer
from calls.evidence import MAX_QUOTE_CHARS, MAX_QUOTES_PER_CALL, MAX_QUOTES_PER_CHECK
from calls.models import Call, CallbackRequest, Classification, Escalation
from calls.services.orders import TIME_UNITS
from core.timezones import is_timezone

FREE_TEXT = 5000


def _validate_timezone(value):
    if value is not None and not is_timezone(value):
        raise serializers.ValidationError("Not an IANA time zone name.")
    return value


class CallStartSerializer(StrictInputSerializer):
    call_id = serializers.CharField(max_length=128, help_text="The runtime's own id of the call (idempotency key).")
    started_at = serializers.DateTimeField()
    from_number = serializers.CharField(max_length=32, allow_null=True, required=False, default=None)
    location_id = serializers.UUIDField(allow_null=True, required=False, default=None)
    direction = serializers.ChoiceField(choices=Call.Direction.values, default=Call.Direction.INBOUND)


class CallbackDataSerializer(StrictInputSerializer):
    callback_number = serializers.CharField(max_length=32, allow_null=True, required=False, default=None)
    requested_window = serializers.ChoiceField(choices=CallbackRequest.Window.values, default="asap")
    custom_window = serializers.CharField(max_length=200, allow_null=True, required=False, default=None)
    reason = serializers.CharField(max_length=FREE_TEXT)
    requested_team_member_id = serializers.UUIDField(allow_null=True, required=False, default=None)


class EscalationDataSerializer(StrictInputSerializer):
    rule_id = serializers.UUIDField()
    triggered_by = serializers.ChoiceField(choices=Escalation.TriggeredBy.values)
    context = serializers.CharField(max_length=FREE_TEXT, allow_blank=True, default="")


class BookingDataSerializer(StrictInputSerializer):
    calendar_id = serializers.UUIDField()
    start_at = serializers.DateTimeField()
    end_at = serializers.DateTimeField()
    timezone = serializers.CharField(max_length=64, allow_null=True, required=False, default=None,
                                     validators=[_validate_timezone])
    contact_name = serializers.CharField(max_length=200, allow_null=True, required=False, default=None)
    contact_email = serializers.EmailField(max_length=254, allow_null=True, required=False, default=None)
    contact_phone = serializers.CharField(max_length=32, allow_null=True, required=False, default=None)


class OrderCancelDataSerializer(StrictInputSerializer):
    call_order_number = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)


class EmptyDataSerializer(StrictInputSerializer):
    pass


TOOL_DATA_SERIALIZERS = {
    "tool": EmptyDataSerializer,
    "callback_requested": CallbackDataSerializer,
    "escalation_triggered": EscalationDataSerializer,
    "appointment_booked": BookingDataSerializer,
    "order_cancel_requested": OrderCancelDataSerializer,
}


class ToolEventSerializer(StrictInputSerializer):
    event_id = serializers.CharField(max_length=128, help_text="The runtime's id of this event (idempotency key).")
    type = serializers.ChoiceField(choices=list(TOOL_DATA_SERIALIZERS))
    label = serializers.CharField(max_length=200, allow_blank=True, default="",
                                  help_text="Caller-perspective trail label, e.g. 'Requested a callback'.")
    offset_seconds = serializers.FloatField(min_value=0, allow_null=True, required=False, default=None)
    data = serializers.DictField(required=False, default=dict)

    def validate(self, attrs):
        inner = TOOL_DATA_SERIALIZERS[attrs["type"]](data=attrs["data"])
        if not inner.is_valid():
            raise serializers.ValidationError({"data": inner.errors})
        attrs["data"] = dict(inner.validated_data)
        return attrs


class TranscriptTurnInput(StrictInputSerializer):
    speaker = serializers.ChoiceField(choices=["agent", "caller"])
    text = serializers.CharField(max_length=10000, allow_blank=True)
    offset_seconds = serializers.FloatField(min_value=0)


class QualityCheckInput(StrictInputSerializer):
    name = serializers.CharField(max_length=200)
    verdict = serializers.ChoiceField(choices=["pass", "fail", "not_applicable"])
    # Capped (calls/evidence.py): each quote is searched in the whole transcript when the call is stored.
    evidence = serializers.ListField(child=serializers.CharField(max_length=MAX_QUOTE_CHARS),
                                     max_length=MAX_QUOTES_PER_CHECK, default=list)
    gap_type = serializers.CharField(max_length=64, allow_null=True, required=False, default=None)


class ModifierInput(StrictInputSerializer):
    group_id = serializers.UUIDField()
    group_name = serializers.CharField(max_length=200)
    option_name = serializers.CharField(max_length=200)
    price_cents = serializers.IntegerField()


class AnswerInput(StrictInputSerializer):
    question_id = serializers.UUIDField()
    prompt = serializers.CharField(max_length=FREE_TEXT)
    answer = serializers.CharField(max_length=FREE_TEXT)


class OrderItemInput(StrictInputSerializer):
    catalog_item_id = serializers.UUIDField()
    name = serializers.CharField(max_length=200)
    quantity = serializers.IntegerField(min_value=1, max_value=1000)
    unit_price_cents = serializers.IntegerField(min_value=0)
    modifiers = ModifierInput(many=True, required=False, default=list)
    answers = AnswerInput(many=True, required=False, default=list)


class OrderInputSerializer(StrictInputSerializer):
    profile_id = serializers.UUIDField()
    profile_name = serializers.CharField(max_length=200)
    items = OrderItemInput(many=True, allow_empty=False)
    order_answers = AnswerInput(many=True, required=False, default=list)
    total_cents = serializers.IntegerField(min_value=0, allow_null=True, required=False, default=None,
                                           help_text="Defaults to the subtotal computed from the items.")
    fulfillment_estimate_value = serializers.FloatField(min_value=0)
    fulfillment_estimate_unit = serializers.ChoiceField(choices=list(TIME_UNITS))
    fulfillment_estimate_label = serializers.CharField(max_length=200, allow_null=True, required=False, default=None)
    fulfillment_varies = serializers.BooleanField(default=False)
    cancellation_allowed = serializers.BooleanField(default=True)
    cancellation_window_value = serializers.FloatField(min_value=0, default=0)
    cancellation_window_unit = serializers.ChoiceField(choices=list(TIME_UNITS), default="minutes")
    placed_at = serializers.DateTimeField(allow_null=True, required=False, default=None)
    payment_status = serializers.CharField(max_length=32, allow_null=True, required=False, default=None)
    external_order_id = serializers.CharField(max_length=200, allow_null=True, required=False, default=None)
    payment_collected_at = serializers.DateTimeField(allow_null=True, required=False, default=None)


class MessageInput(StrictInputSerializer):
    message = serializers.CharField(max_length=FREE_TEXT)
    for_team_member_id = serializers.UUIDField(allow_null=True, required=False, default=None)
    for_team_member_name = serializers.CharField(max_length=200, allow_null=True, required=False, default=None)
    caller_name = serializers.CharField(max_length=200, allow_null=True, required=False, default=None)
    callback_number = serializers.CharField(max_length=32, allow_null=True, required=False, default=None)


class CallerInput(StrictInputSerializer):
    name = serializers.CharField(max_length=200, allow_null=True, required=False, default=None)
    email = serializers.CharField(max_length=254, allow_null=True, required=False, default=None)


MAX_FACTS_USED, MAX_UNANSWERED = 100, 20


class CallCompleteSerializer(StrictInputSerializer):
    # The start fields again, optional: a completion whose start request was lost still creates the call.
    started_at = serializers.DateTimeField(required=False)
    from_number = serializers.CharField(max_length=32, allow_null=True, required=False)
    location_id = serializers.UUIDField(allow_null=True, required=False)
    direction = serializers.ChoiceField(choices=Call.Direction.values, required=False)

    ended_at = serializers.DateTimeField()
    duration_seconds = serializers.IntegerField(min_value=0, allow_null=True, required=False, default=None)
    classification = serializers.ChoiceField(choices=Classification.values)
    disposition = serializers.ChoiceField(choices=Call.Disposition.values, default=Call.Disposition.COMPLETED)
    summary = serializers.CharField(max_length=FREE_TEXT, allow_blank=True, default="")
    outcome = serializers.CharField(max_length=64, allow_blank=True, default="")
    outcome_tags = serializers.ListField(child=serializers.CharField(max_length=64), max_length=50, default=list)
    transcript = TranscriptTurnInput(many=True, required=False, default=list)
    quality_checks = QualityCheckInput(many=True, required=False, default=list)
    score = serializers.IntegerField(min_value=0, max_value=100, allow_null=True, required=False, default=None)
    caller = CallerInput(required=False, default=dict)
    order = OrderInputSerializer(allow_null=True, required=False, default=None)
    messages = MessageInput(many=True, required=False, default=list)
    knowledge_version = serializers.IntegerField(min_value=0, allow_null=True, required=False, default=None,
                                                 help_text="The knowledge version the agent answered from.")
    facts_used = serializers.ListField(child=serializers.UUIDField(), max_length=MAX_FACTS_USED, required=False,
                                       default=list, help_text="Ids of this organization's facts the agent relied on.")
    unanswered_questions = serializers.ListField(
        child=serializers.CharField(max_length=500), max_length=MAX_UNANSWERED, required=False, default=list,
        help_text="What callers asked that the agent could not answer.",
    )

    fields = serializers.DictField(
        required=False, default=dict,
        help_text="The organization's call fields as heard: {name: {value, evidence?}}; each value of its field's "
        "type, evidence a quote of the transcript.",
    )

    def validate_quality_checks(self, checks):
        quotes = sum(len(check["evidence"]) for check in checks)
        if quotes > MAX_QUOTES_PER_CALL:
            raise serializers.ValidationError(
                f"Ensure this field has no more than {MAX_QUOTES_PER_CALL} evidence quotes in all ({quotes} given)."
            )
        return checks
