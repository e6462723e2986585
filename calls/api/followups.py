"""/v1/callbacks, /v1/messages, /v1/escalations: the follow-ups the calls announced, as resources a CRM can list and
mark handled (through the same service as the dashboard's inbox); and /v1/orders."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers

from api.docs import envelope, error_responses, list_envelope
from api.serializers import RangeDateTimeField, StrictInputSerializer, TimestampField
from api.views import ListParams, OrgAPIView, data_response, list_response, paginate
from calls import payloads, selectors
from calls.models import OrderStatus
from calls.services.inbox import follow_up_set_handled
from core.errors import NotFound
from core.timefmt import iso_ms

from .serializers import OrderSerializer


class FollowUpParams(ListParams):
    handled = serializers.BooleanField(required=False, allow_null=True, default=None,
                                       help_text="true: handled only; false: still open only.")
    location_id = serializers.UUIDField(required=False)
    since = RangeDateTimeField(required=False, help_text="Created at or after (ISO 8601).")
    until = RangeDateTimeField(required=False, help_text="Created at or before (ISO 8601).")
    call_id = serializers.UUIDField(required=False)


class HandledInput(StrictInputSerializer):
    partial_on_patch = False
    handled = serializers.BooleanField()


class HandledBySerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["user", "api_key"])
    id = serializers.CharField()
    name = serializers.CharField(help_text="The user's e-mail, or the API key's name.")


def _follow_up_serializer(name: str, event_fields: dict):
    """The schema of one kind of follow-up (the views build the data directly: payloads + follow_up_data)."""
    return type(f"{name}Serializer", (serializers.Serializer,), {
        "id": serializers.UUIDField(),
        **event_fields,
        "handled": serializers.BooleanField(),
        "handled_at": TimestampField(allow_null=True),
        "handled_by": HandledBySerializer(allow_null=True),
        "created_at": TimestampField(),
    })


_text = serializers.CharField
_nullable_id = lambda: serializers.UUIDField(allow_null=True)  # noqa: E731
_nullable_text = lambda: serializers.CharField(allow_null=True)  # noqa: E731
KINDS = {
    "callback": ("callbacks", "Callbacks", payloads.callback_requested_data, _follow_up_serializer("Callback", {
        "call_id": serializers.UUIDField(), "location_id": _nullable_id(), "contact_id": _nullable_id(),
        "callback_number": _nullable_text(), "requested_window": _text(), "custom_window": _nullable_text(),
        "reason": _text(), "requested_team_member_id": _nullable_id(),
    })),
    "message": ("messages", "Messages", payloads.message_taken_data, _follow_up_serializer("Message", {
        "call_id": serializers.UUIDField(), "location_id": _nullable_id(), "contact_id": _nullable_id(),
        "for_team_member_id": _nullable_id(), "for_team_member_name": _nullable_text(), "message": _text(),
        "caller_name": _nullable_text(), "callback_number": _nullable_text(),
    })),
    "escalation": ("escalations", "Escalations", payloads.escalation_triggered_data, _follow_up_serializer(
        "Escalation", {
            "call_id": serializers.UUIDField(), "location_id": _nullable_id(), "rule_id": _nullable_id(),
            "rule_name": _text(), "destination_type": serializers.ChoiceField(choices=["team_member", "phone"]),
            "destination_id": _nullable_id(), "destination_phone": _nullable_text(),
            "triggered_by": serializers.ChoiceField(choices=["keyword", "llm_classification"]), "context": _text(),
        })),
}


def _handled_by(item):
    if item.handled_by_id:
        return {"type": "user", "id": str(item.handled_by_id), "name": item.handled_by.email}
    if item.handled_by_key_id:
        return {"type": "api_key", "id": str(item.handled_by_key_id), "name": item.handled_by_key.name}
    return None


def follow_up_data(kind: str, item) -> dict:
    """The event's fields, then the follow-up's own."""
    build = KINDS[kind][2]
    return {
        "id": str(item.pk),
        **build(item, item.call),
        "handled": item.handled_at is not None,
        "handled_at": iso_ms(item.handled_at),
        "handled_by": _handled_by(item),
        "created_at": iso_ms(item.created_at),
    }


class FollowUpListView(OrgAPIView):
    kind = ""
    filter_params = FollowUpParams
    time_field = "created_at"

    def get(self, request):
        params = self.validate_query(self.filter_params)
        rows, has_more, cursor = paginate(self.rows(params), params, scope=KINDS[self.kind][0])
        return list_response([follow_up_data(self.kind, row) for row in rows], has_more, cursor)

    def rows(self, params: dict):
        """The follow-ups the query selects, unordered (paged here, streamed by the export)."""
        return selectors.follow_up_list(org=self.org, kind=self.kind, **self.filter_params.filters(params))


class FollowUpDetailView(OrgAPIView):
    kind = ""

    def get(self, request, id):  # noqa: A002 - the path parameter
        return data_response(follow_up_data(self.kind, self._get(id)))

    def patch(self, request, id):  # noqa: A002
        self._get(id)  # 404 for what the list does not show (another org's, an unannounced message)
        body = self.validate_body(HandledInput)
        follow_up_set_handled(kind=self.kind, org=self.org, item_id=id, handled=body["handled"],
                              api_key=self.api_key)
        return data_response(follow_up_data(self.kind, self._get(id)))

    def _get(self, id):  # noqa: A002
        return self.get_object(id, queryset=selectors.follow_up_list(org=self.org, kind=self.kind))


ID = OpenApiParameter("id", OpenApiTypes.UUID, OpenApiParameter.PATH)


def _views(kind: str):
    """The list and detail views of one kind, each method a function of its own (extend_schema annotates the
    function it is given, so three kinds cannot share one)."""
    path, title, _, item = KINDS[kind]
    singular = title[:-1].lower()
    listed = extend_schema(
        operation_id=f"{path}_list", summary=f"List {title.lower()}", tags=["Follow-ups"], parameters=[FollowUpParams],
        description=f"The {title.lower()} the calls announced, newest first, with whether the team handled them.",
        responses={200: list_envelope(item, name=f"{title[:-1]}List"), **error_responses(400)},
    )(lambda self, request: FollowUpListView.get(self, request))
    got = extend_schema(
        operation_id=f"{path}_retrieve", summary=f"Get a {singular}", tags=["Follow-ups"], parameters=[ID],
        responses={200: envelope(item, name=f"{title[:-1]}Response"), **error_responses(404)},
    )(lambda self, request, id: FollowUpDetailView.get(self, request, id))
    patched = extend_schema(
        operation_id=f"{path}_update", summary=f"Mark a {singular} handled or open", tags=["Follow-ups"],
        parameters=[ID], request=HandledInput,
        description="`{\"handled\": true}` records this API key as the handler (the dashboard inbox shows it); "
        "`false` opens it again. The same value again changes nothing.",
        responses={200: envelope(item, name=f"{title[:-1]}Response"), **error_responses(400, 403, 404)},
    )(lambda self, request, id: FollowUpDetailView.patch(self, request, id))
    list_view = type(f"{title}ListView", (FollowUpListView,), {"kind": kind, "get": listed})
    detail_view = type(f"{title[:-1]}DetailView", (FollowUpDetailView,), {"kind": kind, "get": got, "patch": patched})
    return path, list_view, detail_view


FOLLOW_UP_VIEWS = [_views(kind) for kind in KINDS]


class OrderParams(ListParams):
    status = serializers.ChoiceField(choices=OrderStatus.choices, required=False)
    location_id = serializers.UUIDField(required=False)
    since = RangeDateTimeField(required=False, help_text="Placed at or after (ISO 8601).")
    until = RangeDateTimeField(required=False, help_text="Placed at or before (ISO 8601).")


class OrderListView(OrgAPIView):
    filter_params = OrderParams
    time_field = "placed_at"

    @extend_schema(
        operation_id="orders_list", summary="List orders", tags=["Orders"], parameters=[OrderParams],
        description="Every order placed on a call, newest first by `placed_at`: the `call.ended` order object "
        "plus `call_id` and `order_status`. Change a status with PATCH /v1/calls/{id}/order-status.",
        responses={200: list_envelope(OrderSerializer), **error_responses(400)},
    )
    def get(self, request):
        params = self.validate_query(self.filter_params)
        rows, has_more, cursor = paginate(self.rows(params), params, time_field=self.time_field, scope="orders")
        return list_response([payloads.order_detail_data(order) for order in rows], has_more, cursor)

    def rows(self, params: dict):
        """The orders the query selects, unordered (paged here, streamed by the export)."""
        return selectors.order_list(org=self.org, **self.filter_params.filters(params))


class OrderDetailView(OrgAPIView):
    @extend_schema(
        operation_id="orders_retrieve", summary="Get the order of a call", tags=["Orders"],
        parameters=[OpenApiParameter("call_id", OpenApiTypes.UUID, OpenApiParameter.PATH)],
        responses={200: envelope(OrderSerializer), **error_responses(404)},
    )
    def get(self, request, call_id):
        order = selectors.call_order(selectors.call_get(org=self.org, call_id=call_id))
        if order is None:
            raise NotFound()
        return data_response(payloads.order_detail_data(order))
