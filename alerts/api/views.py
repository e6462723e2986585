"""/v1/alert-rules and /v1/alerts: thin views over alerts.services and alerts.selectors."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from alerts import selectors, services
from alerts.models import Alert, AlertRule
from api.docs import envelope, error_responses, list_envelope
from api.serializers import serializer_item
from api.views import ListParams, OrgAPIView, data_response, item_list_response

from .serializers import AlertListParams, AlertRuleInput, AlertRuleSerializer, AlertSerializer

RULE_TAGS = ["Alert rules"]
ALERT_TAGS = ["Alerts"]
ID_PARAMETER = OpenApiParameter(
    "id", OpenApiTypes.UUID, OpenApiParameter.PATH, description="The resource id. Another organization's id is 404."
)
RULE_RESPONSE = envelope(AlertRuleSerializer)
ALERT_RESPONSE = envelope(AlertSerializer)


class AlertRuleListView(OrgAPIView):
    @extend_schema(operation_id="alert_rules_list", summary="List alert rules", tags=RULE_TAGS,
                   description="Newest first. A key limited to locations lists the rules of its locations only.",
                   parameters=[ListParams], responses={200: list_envelope(AlertRuleSerializer), **error_responses(400)})
    def get(self, request):
        params = self.validate_query(ListParams)
        return item_list_response(selectors.alert_rule_list(org=self.org), params,
                                  item=serializer_item(AlertRuleSerializer), scope="alert-rules")

    @extend_schema(
        operation_id="alert_rules_create", summary="Create an alert rule", tags=RULE_TAGS,
        description="Evaluated every minute from the next minute on. 400 names the field (an unknown metric or "
        "comparator, a window outside 15..1,440, a location of another organization); 409 `conflict` for a "
        "duplicate name (`name`) and over the quota of 50 rules (`alert_rules`); 403 for a key limited to "
        "locations asking for the whole organization.",
        request=AlertRuleInput, responses={201: RULE_RESPONSE, **error_responses(400, 403, 409)},
    )
    def post(self, request):
        data = self.validate_body(AlertRuleInput)
        rule = services.alert_rule_create(org=self.org, **data)
        return data_response(AlertRuleSerializer(rule).data, status=201)


class AlertRuleDetailView(OrgAPIView):
    model = AlertRule

    @extend_schema(operation_id="alert_rules_retrieve", summary="Get an alert rule", tags=RULE_TAGS,
                   parameters=[ID_PARAMETER], responses={200: RULE_RESPONSE, **error_responses(404)})
    def get(self, request, id):  # noqa: A002 - the path parameter
        return data_response(AlertRuleSerializer(self.get_object(id)).data)

    @extend_schema(operation_id="alert_rules_partial_update", summary="Update an alert rule", tags=RULE_TAGS,
                   description="Any subset of the fields, checked against the rule they produce.",
                   parameters=[ID_PARAMETER], request=AlertRuleInput(partial=True),
                   responses={200: RULE_RESPONSE, **error_responses(400, 403, 404, 409)})
    def patch(self, request, id):  # noqa: A002
        rule = self.get_object(id)
        data = self.validate_body(AlertRuleInput, partial=True)
        return data_response(AlertRuleSerializer(services.alert_rule_update(rule=rule, **data)).data)

    @extend_schema(operation_id="alert_rules_destroy", summary="Delete an alert rule", tags=RULE_TAGS,
                   description="Its alerts stay (`rule_id` null); an open one is resolved.",
                   parameters=[ID_PARAMETER], responses={204: None, **error_responses(403, 404)})
    def delete(self, request, id):  # noqa: A002
        services.alert_rule_delete(rule=self.get_object(id))
        return Response(status=204)


class AlertListView(OrgAPIView):
    @extend_schema(operation_id="alerts_list", summary="List alerts", tags=ALERT_TAGS,
                   description="Newest first. A key limited to locations lists its locations' alerts only.",
                   parameters=[AlertListParams],
                   responses={200: list_envelope(AlertSerializer), **error_responses(400)})
    def get(self, request):
        params = self.validate_query(AlertListParams)
        rows = selectors.alert_list(org=self.org, **AlertListParams.filters(params))
        return item_list_response(rows, params, item=serializer_item(AlertSerializer), scope="alerts")


class AlertDetailView(OrgAPIView):
    model = Alert

    @extend_schema(operation_id="alerts_retrieve", summary="Get an alert", tags=ALERT_TAGS,
                   parameters=[ID_PARAMETER], responses={200: ALERT_RESPONSE, **error_responses(404)})
    def get(self, request, id):  # noqa: A002
        return data_response(AlertSerializer(self.get_object(id)).data)


class AlertAcknowledgeView(OrgAPIView):
    model = Alert

    @extend_schema(operation_id="alerts_acknowledge", summary="Acknowledge an alert", tags=ALERT_TAGS,
                   description="Once: acknowledging again answers the first acknowledgement unchanged.",
                   parameters=[ID_PARAMETER], request=None,
                   responses={200: ALERT_RESPONSE, **error_responses(403, 404)})
    def post(self, request, id):  # noqa: A002
        alert = self.get_object(id)
        key = self.api_key
        alert = services.alert_acknowledge(alert=alert, by=f"API key {key.name} ({key.key_prefix}...)")
        return data_response(AlertSerializer(alert).data)
