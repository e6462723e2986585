"""The shapes of /v1/alert-rules and /v1/alerts (docs/api.md#alerts)."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from alerts.models import Alert, AlertRule, Channel, Comparator, Metric
from alerts.selectors import ALERT_STATUSES
from alerts.services import MAX_COOLDOWN, MAX_MIN_CALLS, MAX_THRESHOLD, MAX_WINDOW, MIN_WINDOW
from api.serializers import OutputModelSerializer, StrictInputSerializer
from api.views import ListParams


class AlertRuleSerializer(OutputModelSerializer):
    """What to watch and when to tell. `location_ids` null: the organization as a whole (line_silent: each of its
    locations)."""

    location_ids = serializers.ListField(child=serializers.UUIDField(), allow_null=True, read_only=True,
                                         help_text="null: the whole organization.")
    channels = serializers.ListField(child=serializers.ChoiceField(choices=Channel.choices), read_only=True)

    class Meta:
        model = AlertRule
        fields = ["id", "name", "metric", "location_ids", "comparator", "threshold", "window_minutes", "min_calls",
                  "cooldown_minutes", "channels", "only_during_open_hours", "enabled", "created_at", "updated_at"]


# The rules the service applies to location_ids (orgs.scopes.clean_location_ids), stated for the schema; which ids
# are the organization's is the one part no schema can say.
@extend_schema_field({"type": "array", "items": {"type": "string", "format": "uuid"}, "minItems": 1,
                      "uniqueItems": True})
class RuleLocationIdsField(serializers.ListField):
    pass


class AlertRuleInput(StrictInputSerializer):
    """POST: `name`, `metric`, `comparator`, `threshold` and `window_minutes` required (line_silent: comparator and
    threshold may be left out; they are lt and 1). PATCH: any subset, checked against the rule it produces."""

    name = serializers.CharField(max_length=200, help_text="Unique per organization.")
    metric = serializers.ChoiceField(choices=Metric.choices)
    location_ids = RuleLocationIdsField(child=serializers.UUIDField(), required=False, allow_null=True,
                                        help_text="Locations of this organization (non-empty, no repeats); null: "
                                        "the whole organization.")
    comparator = serializers.ChoiceField(choices=Comparator.choices, required=False)
    threshold = serializers.FloatField(min_value=0, max_value=MAX_THRESHOLD, required=False,
                                       help_text="A count, or a fraction 0..1 for the rates.")
    window_minutes = serializers.IntegerField(min_value=MIN_WINDOW, max_value=MAX_WINDOW)
    min_calls = serializers.IntegerField(min_value=0, max_value=MAX_MIN_CALLS, required=False)
    cooldown_minutes = serializers.IntegerField(min_value=0, max_value=MAX_COOLDOWN, required=False)
    channels = serializers.ListField(child=serializers.ChoiceField(choices=Channel.choices), max_length=2,
                                     required=False)
    only_during_open_hours = serializers.BooleanField(required=False)
    enabled = serializers.BooleanField(required=False)


class AlertSerializer(OutputModelSerializer):
    """One time a rule's condition held. `location_id` null: the organization as a whole."""

    rule_id = serializers.UUIDField(allow_null=True, read_only=True, help_text="null once the rule is deleted.")
    location_id = serializers.UUIDField(allow_null=True, read_only=True)

    class Meta:
        model = Alert
        fields = ["id", "rule_id", "location_id", "metric", "value", "threshold", "window_minutes", "triggered_at",
                  "acknowledged_at", "acknowledged_by", "resolved_at"]


class AlertListParams(ListParams):
    status = serializers.ChoiceField(choices=ALERT_STATUSES, required=False,
                                     help_text="open (not resolved), acknowledged (open and acknowledged), resolved.")
    rule_id = serializers.UUIDField(required=False)
    location_id = serializers.UUIDField(required=False)


def add_alert_rule_conditions(result, generator, request, public):
    """drf-spectacular postprocessing hook: what JSON Schema can say of a new rule's cross-field rules
    (alerts.services._clean); a PATCH is checked against the rule it changes, which no schema can say."""
    schemas = result.get("components", {}).get("schemas", {})
    for name in ("AlertRuleInputRequest", "PatchedAlertRuleInputRequest"):
        if name in schemas:
            schemas[name]["properties"]["channels"]["uniqueItems"] = True
    body = schemas.get("AlertRuleInputRequest")
    if body is not None:
        line_silent = {"properties": {"metric": {"const": Metric.LINE_SILENT.value}}}
        rates = {"properties": {"metric": {"enum": [Metric.UNANSWERED_QUESTION_RATE.value,
                                                    Metric.WEBHOOK_FAILURE_RATE.value]}}}
        body["allOf"] = [
            {"if": line_silent,
             "then": {"properties": {"comparator": {"const": Comparator.LT.value}, "threshold": {"const": 1},
                                     "min_calls": {"minimum": 1}}},
             "else": {"required": ["comparator", "threshold"]}},
            {"if": rates, "then": {"properties": {"threshold": {"maximum": 1}}}},
            {"if": {"properties": {"metric": {"const": Metric.WEBHOOK_FAILURE_RATE.value}}},
             "then": {"properties": {"location_ids": {"type": "null"}}}},
        ]
    return result
