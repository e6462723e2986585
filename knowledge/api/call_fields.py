"""/v1/call-fields: what the organization wants pulled out of each call. Every change bumps the knowledge version,
so the runtime's next knowledge read tells the agent to listen for it; past calls keep what they were stored with."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from api.docs import envelope, error_responses, list_envelope
from api.serializers import OutputModelSerializer, StrictInputSerializer, serializer_item
from api.views import ListParams, OrgAPIView, data_response, item_list_response
from knowledge import selectors, services
from knowledge.models import CallField

TAGS = ["Call fields"]
ID_PARAMETER = OpenApiParameter(
    "id", OpenApiTypes.UUID, OpenApiParameter.PATH, description="The call field id. Another organization's id is 404."
)


class CallFieldSerializer(OutputModelSerializer):
    """Something the agent pulls out of each call: the completion reports `{name: {value, evidence?}}` and the
    call shows it. `choices` is non-empty only for `enum`."""

    choices = serializers.ListField(child=serializers.CharField(), read_only=True)
    location_ids = serializers.ListField(child=serializers.UUIDField(), allow_null=True, read_only=True,
                                         help_text="null: every location.")

    class Meta:
        model = CallField
        fields = ["id", "name", "label", "description", "type", "choices", "required", "location_ids", "created_at",
                  "updated_at"]


class CallFieldInput(StrictInputSerializer):
    """POST: `name`, `label` and `type` required (and `choices` for `enum`). PATCH: any subset, checked against the
    field it produces."""

    name = serializers.CharField(max_length=64, help_text="1 to 64 of a-z, 0-9 and _, starting with a letter; "
                                 "two fields share a name only when their locations never meet (null meets all).")
    label = serializers.CharField(max_length=200)
    description = serializers.CharField(max_length=1000, required=False, allow_blank=True,
                                        help_text="What the agent should listen for.")
    type = serializers.ChoiceField(choices=CallField.Type.choices)
    choices = serializers.ListField(child=serializers.CharField(max_length=200), max_length=50, required=False,
                                    help_text="enum only: 1 to 50 distinct strings.")
    required = serializers.BooleanField(required=False)
    location_ids = serializers.ListField(child=serializers.UUIDField(), required=False, allow_null=True,
                                         help_text="Locations of this organization (non-empty); null: every one.")


def add_call_field_conditions(result, generator, request, public):
    """drf-spectacular postprocessing hook: what JSON Schema can say of the body's cross-field rules."""
    schemas = result.get("components", {}).get("schemas", {})
    for name in ("CallFieldInputRequest", "PatchedCallFieldInputRequest"):
        if name in schemas:
            properties = schemas[name]["properties"]
            properties["name"]["pattern"] = "^[a-z][a-z0-9_]{0,63}$"
            properties["choices"]["uniqueItems"] = True
            properties["location_ids"]["minItems"] = 1
            properties["location_ids"]["uniqueItems"] = True
    body = schemas.get("CallFieldInputRequest")
    if body is not None:
        body["allOf"] = [
            {"if": {"properties": {"type": {"const": "enum"}}},
             "then": {"required": ["choices"], "properties": {"choices": {"minItems": 1}}},
             "else": {"properties": {"choices": {"maxItems": 0}}}},
        ]
    return result


FIELD_RESPONSE = envelope(CallFieldSerializer)


class CallFieldListView(OrgAPIView):
    @extend_schema(
        operation_id="call_fields_list", summary="List call fields", tags=TAGS,
        description="Newest first; cursor-paginated like every list.", parameters=[ListParams],
        responses={200: list_envelope(CallFieldSerializer), **error_responses(400)},
    )
    def get(self, request):
        params = self.validate_query(ListParams)
        return item_list_response(selectors.call_field_list(org=self.org), params,
                                  item=serializer_item(CallFieldSerializer), scope="call-fields")

    @extend_schema(
        operation_id="call_fields_create", summary="Create a call field", tags=TAGS,
        description="Served to the runtime by its next knowledge read. A name another field has at one of the same "
        "locations (null: every location) is 409 `conflict`; a "
        "`location_ids` entry that is not a location of this organization is 400.",
        request=CallFieldInput, responses={201: FIELD_RESPONSE, **error_responses(400, 403, 409)},
    )
    def post(self, request):
        data = self.validate_body(CallFieldInput)
        field = services.call_field_create(org=self.org, actor=self.api_key, **data)
        return data_response(CallFieldSerializer(field).data, status=201)


class CallFieldDetailView(OrgAPIView):
    model = CallField

    @extend_schema(operation_id="call_fields_retrieve", summary="Get a call field", tags=TAGS,
                   parameters=[ID_PARAMETER], responses={200: FIELD_RESPONSE, **error_responses(404)})
    def get(self, request, id):  # noqa: A002 - the path parameter
        return data_response(CallFieldSerializer(self.get_object(id)).data)

    @extend_schema(
        operation_id="call_fields_partial_update", summary="Update a call field", tags=TAGS,
        description="Any subset of the fields. Past calls keep the name, label and value they were stored with.",
        parameters=[ID_PARAMETER], request=CallFieldInput(partial=True),
        responses={200: FIELD_RESPONSE, **error_responses(400, 403, 404, 409)},
    )
    def patch(self, request, id):  # noqa: A002
        field = self.get_object(id)
        data = self.validate_body(CallFieldInput, partial=True)
        field = services.call_field_update(call_field=field, actor=self.api_key, **data)
        return data_response(CallFieldSerializer(field).data)

    @extend_schema(operation_id="call_fields_destroy", summary="Delete a call field", tags=TAGS,
                   description="Past calls keep their values under the name they were stored with.",
                   parameters=[ID_PARAMETER], responses={204: None, **error_responses(403, 404)})
    def delete(self, request, id):  # noqa: A002
        services.call_field_delete(call_field=self.get_object(id), actor=self.api_key)
        return Response(status=204)
