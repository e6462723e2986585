"""/v1/escalation-rules: when the agent hands a caller to a human, and to whom. Every change bumps the knowledge
version, so the runtime's next knowledge read serves it (enabled rules only)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from api.docs import envelope, error_responses, list_envelope
from api.serializers import OutputModelSerializer, StrictInputSerializer, serializer_item
from api.views import ListParams, OrgAPIView, data_response, item_list_response
from knowledge import selectors, services
from knowledge.models import EscalationRule

from .serializers import service_args

TAGS = ["Escalation rules"]
ID_PARAMETER = OpenApiParameter(
    "id", OpenApiTypes.UUID, OpenApiParameter.PATH, description="The rule id. Another organization's id is 404."
)


class EscalationRuleSerializer(OutputModelSerializer):
    """When to hand the caller to a human (`keywords`, or what `description` tells the runtime's classifier to
    look for) and to whom (`destination_type`: a team member of this org, or an E.164 phone number)."""

    destination_team_member_id = serializers.UUIDField(allow_null=True, read_only=True)
    location_id = serializers.UUIDField(allow_null=True, read_only=True, help_text="null: every location.")
    keywords = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = EscalationRule
        fields = ["id", "name", "description", "keywords", "enabled", "destination_type", "destination_team_member_id",
                  "destination_phone", "location_id", "created_at", "updated_at"]


class EscalationRuleInput(StrictInputSerializer):
    """POST: `name` and `destination_type` required, and keywords or a description. PATCH: any subset."""

    name = serializers.CharField(max_length=200, help_text="Unique per organization.")
    description = serializers.CharField(max_length=5000, required=False, allow_blank=True,
                                        help_text="What the runtime's classifier looks for.")
    keywords = serializers.ListField(child=serializers.CharField(max_length=100), max_length=50, required=False,
                                     help_text="0 to 50, each 1 to 100 characters, no case-insensitive repeats.")
    enabled = serializers.BooleanField(required=False, default=True)
    destination_type = serializers.ChoiceField(choices=EscalationRule.DestinationType.choices)
    destination_team_member_id = serializers.UUIDField(
        required=False, allow_null=True, help_text="A team member of this organization; required iff team_member."
    )
    destination_phone = serializers.CharField(max_length=32, required=False, allow_null=True,
                                              help_text="E.164 (or national in the org's region); required iff phone.")
    location_id = serializers.UUIDField(required=False, allow_null=True,
                                        help_text="A location of this organization; null for every location.")


def add_rule_conditions(result, generator, request, public):
    """drf-spectacular postprocessing hook: the create body's cross-field rules in JSON Schema (2020-12), so a
    client or a fuzzer knows them: the destination field its type names is required (the other must be null or
    absent), and a rule has keywords or a description. A PATCH is checked against the rule it changes."""
    schemas = result.get("components", {}).get("schemas", {})
    for name in ("EscalationRuleInputRequest", "PatchedEscalationRuleInputRequest"):
        if name in schemas:
            # Distinct, and also ignoring case, which JSON Schema cannot say.
            schemas[name]["properties"]["keywords"]["uniqueItems"] = True
    body = schemas.get("EscalationRuleInputRequest")
    if body is not None:
        body["allOf"] = [
            {"if": {"properties": {"destination_type": {"const": "team_member"}}},
             "then": {"required": ["destination_team_member_id"],
                      "properties": {"destination_team_member_id": {"type": "string"},
                                     "destination_phone": {"type": "null"}}}},
            {"if": {"properties": {"destination_type": {"const": "phone"}}},
             "then": {"required": ["destination_phone"],
                      "properties": {"destination_phone": {"type": "string"},
                                     "destination_team_member_id": {"type": "null"}}}},
            {"anyOf": [{"required": ["keywords"], "properties": {"keywords": {"minItems": 1}}},
                       {"required": ["description"],
                        "properties": {"description": {"pattern": "[^\\s\\x00]"}}}]},
        ]
    return result


def _service_args(data: dict) -> dict:
    return service_args(data, destination_team_member_id="destination_team_member", location_id="location")


RULE_RESPONSE = envelope(EscalationRuleSerializer)


class EscalationRuleListView(OrgAPIView):
    @extend_schema(
        operation_id="escalation_rules_list", summary="List escalation rules", tags=TAGS,
        description="Newest first; cursor-paginated like every list.", parameters=[ListParams],
        responses={200: list_envelope(EscalationRuleSerializer), **error_responses(400)},
    )
    def get(self, request):
        params = self.validate_query(ListParams)
        return item_list_response(selectors.escalation_rule_list(org=self.org), params,
                                  item=serializer_item(EscalationRuleSerializer), scope="escalation-rules")

    @extend_schema(
        operation_id="escalation_rules_create", summary="Create an escalation rule", tags=TAGS,
        description="Served to the runtime by its next knowledge read (when enabled). A duplicate name is 409 "
        "`conflict`; another organization's team member or location is 404.",
        request=EscalationRuleInput, responses={201: RULE_RESPONSE, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request):
        data = self.validate_body(EscalationRuleInput)
        rule = services.escalation_rule_create(org=self.org, actor=self.api_key, **_service_args(data))
        return data_response(EscalationRuleSerializer(rule).data, status=201)


class EscalationRuleDetailView(OrgAPIView):
    model = EscalationRule

    @extend_schema(operation_id="escalation_rules_retrieve", summary="Get an escalation rule", tags=TAGS,
                   parameters=[ID_PARAMETER], responses={200: RULE_RESPONSE, **error_responses(404)})
    def get(self, request, id):  # noqa: A002 - the path parameter
        return data_response(EscalationRuleSerializer(self.get_object(id)).data)

    @extend_schema(
        operation_id="escalation_rules_partial_update", summary="Update an escalation rule", tags=TAGS,
        description="Any subset of the fields; `enabled: false` switches the rule off for the runtime.",
        parameters=[ID_PARAMETER], request=EscalationRuleInput(partial=True),
        responses={200: RULE_RESPONSE, **error_responses(400, 403, 404, 409)},
    )
    def patch(self, request, id):  # noqa: A002
        rule = self.get_object(id)
        data = self.validate_body(EscalationRuleInput, partial=True)
        rule = services.escalation_rule_update(rule=rule, actor=self.api_key, **_service_args(data))
        return data_response(EscalationRuleSerializer(rule).data)

    @extend_schema(operation_id="escalation_rules_destroy", summary="Delete an escalation rule", tags=TAGS,
                   description="Past escalations stay, with the rule's name (their `rule_id` becomes null).",
                   parameters=[ID_PARAMETER], responses={204: None, **error_responses(403, 404)})
    def delete(self, request, id):  # noqa: A002
        services.escalation_rule_delete(rule=self.get_object(id), actor=self.api_key)
        return Response(status=204)
