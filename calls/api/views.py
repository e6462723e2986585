"""/v1/calls: the call history, one call, its recording URL, and the order status. Thin: validate, call, render."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from api.docs import envelope, error_responses, list_envelope
from api.serializers import RangeDateTimeField
from api.views import ListParams, OrgAPIView, data_response, item_list_response
from calls import recordings, search, selectors
from calls.errors import RecordingNotReady, RecordingWithheld
from calls.models import Call, CancelSource, Classification
from calls.payloads import call_data_sql
from calls.services.content import RECORDING, TRANSCRIPT, call_content_delete
from calls.services.orders import order_set_status

from .serializers import (
    CallDetailSerializer,
    CallSerializer,
    OrderSerializer,
    OrderStatusInputSerializer,
    RecordingSerializer,
)

ID_PARAMETER = OpenApiParameter(
    "id", OpenApiTypes.UUID, OpenApiParameter.PATH, description="The call id. Another organization's id is 404."
)


class CallListParams(ListParams):
    since = RangeDateTimeField(required=False, help_text="Calls that started at or after this time.")
    until = RangeDateTimeField(required=False, help_text="Calls that started before this time.")
    location_id = serializers.UUIDField(required=False)
    contact_id = serializers.UUIDField(required=False)
    outcome = serializers.CharField(required=False, max_length=64, help_text="e.g. `order`, `message`, `booking`.")
    disposition = serializers.ChoiceField(choices=Call.Disposition.choices, required=False)
    classification = serializers.ChoiceField(choices=Classification.choices, required=False)
    scorable = serializers.BooleanField(required=False, allow_null=True, default=None)
    has_recording = serializers.BooleanField(required=False, allow_null=True, default=None)
    direction = serializers.ChoiceField(choices=Call.Direction.choices, required=False)
    status = serializers.ChoiceField(choices=Call.Status.choices, required=False)
    q = serializers.CharField(
        required=False, max_length=search.MAX_LENGTH,
        help_text='Full-text search of the summary and the transcript: every word must match (stemmed), '
        '"a phrase" in quotes matches in order, `word*` matches a prefix. Still newest first.',
    )

    def to_internal_value(self, data):
        # `fields.<name>=<value>` names a call field of the org: only the selector knows them, so the raw values go
        # there (`fields`) and everything else is checked here as usual.
        field_filters = {key.removeprefix(FIELD_FILTER_PREFIX): data[key] for key in data
                         if key.startswith(FIELD_FILTER_PREFIX)}
        rest = data.copy()
        for name in field_filters:
            rest.pop(FIELD_FILTER_PREFIX + name)
        return {**super().to_internal_value(rest), "fields": field_filters}

    @classmethod
    def filters(cls, params: dict) -> dict:
        return {**super().filters(params), "fields": params.get("fields")}


FIELD_FILTER_PREFIX = "fields."


class CallListView(OrgAPIView):
    filter_params = CallListParams
    time_field = "started_at"

    @extend_schema(
        operation_id="calls_list",
        summary="List calls",
        description="The call history, newest first by `started_at`, cursor-paginated: pass `next_cursor` back as "
        "`cursor` while `has_more` is true. `limit` is 1 to 100 (default 20). Robocalls, automated dialers and "
        "wrong-number hangups are listed with `scorable: false` and `score: null`. Calls still in progress are "
        "listed with `status: in_progress` and null end fields. `fields.<name>=<value>` (repeatable over names) "
        "keeps the calls whose call field `<name>` was stored with exactly that value, read as the field's type "
        "(`fields.party_size=4`, `fields.wants_delivery=true`, `fields.pickup_date=2026-11-21`); a name that is not "
        "one of the organization's call fields, or a value not of its type, is 400 under `fields` (`<name>: ...`).",
        parameters=[CallListParams],
        responses={200: list_envelope(CallSerializer), **error_responses(400)},
        tags=["Calls"],
    )
    def get(self, request):
        params = self.validate_query(self.filter_params)
        return item_list_response(self.rows(params), params, item=call_data_sql(), time_field=self.time_field,
                                  scope="calls")

    def rows(self, params: dict):
        """The calls the query selects, unordered: the list pages them, the export (exports.py) streams them."""
        return selectors.call_filter(org=self.org, **self.filter_params.filters(params))


class CallDetailView(OrgAPIView):
    @extend_schema(
        operation_id="calls_retrieve",
        summary="Get a call",
        description="One call with its full transcript, the quality checks behind its score, its trail and, when "
        "the outcome is `order`, the order (the `call.ended` order object plus `order_status`).",
        parameters=[ID_PARAMETER],
        responses={200: envelope(CallDetailSerializer), **error_responses(404)},
        tags=["Calls"],
    )
    def get(self, request, id):
        return data_response(CallDetailSerializer(selectors.call_get(org=self.org, call_id=id)).data)


class CallRecordingView(OrgAPIView):
    @extend_schema(
        operation_id="calls_recording",
        summary="Get a recording playback URL",
        description="A URL minted on this request and valid for one hour (`expires_at`). Call this after "
        "`call.recording_ready`; before the upload has finished the answer is 404 `recording_not_ready`. "
        "A call whose recording was not kept because a card, government id or bank account number was heard on it "
        "(the organization's redaction policy) is 404 `recording_withheld`, for good. An unknown call is 404 "
        "`not_found`.",
        parameters=[ID_PARAMETER],
        responses={200: envelope(RecordingSerializer), **error_responses(404)},
        tags=["Calls"],
    )
    def get(self, request, id):
        call = selectors.call_get(org=self.org, call_id=id)
        recording = selectors.call_recording(call)
        if recording is None and (call.redaction or {}).get("recording_withheld"):
            raise RecordingWithheld("The recording was not kept: sensitive data was heard on this call.")
        if recording is None:
            raise RecordingNotReady("The recording has not finished uploading.")
        return data_response(RecordingSerializer(recordings.playback(recording)).data)

    @extend_schema(
        operation_id="calls_recording_delete",
        summary="Delete a call's recording",
        description="Deletes the audio (from storage too) and emits `call.content_deleted` with `parts: "
        "[\"recording\"]`, `reason: request`. 204, and 204 again when there is nothing left to delete. A key "
        "limited to locations deletes only its locations' calls (another's is 404). docs/privacy.md.",
        parameters=[ID_PARAMETER],
        responses={204: None, **error_responses(403, 404)},
        tags=["Calls"],
    )
    def delete(self, request, id):
        call_content_delete(call=selectors.call_get(org=self.org, call_id=id), parts=[RECORDING], reason="request")
        return Response(status=204)


class CallContentView(OrgAPIView):
    @extend_schema(
        operation_id="calls_content_delete",
        summary="Delete a call's content",
        description="Deletes the transcript, the summary, the quality checks' evidence, the messages' text and "
        "caller names, the call fields' evidence, the unanswered questions, the order's answers and the recording; "
        "the call stays as a tombstone (ids, times, figures, `content_deleted_at`, `content_deleted_reason: "
        "request`) and its stored event bodies keep ids only. Emits `call.content_deleted`. 204, and 204 again. A "
        "key limited to locations deletes only its locations' calls (another's is 404). docs/privacy.md.",
        parameters=[ID_PARAMETER],
        responses={204: None, **error_responses(403, 404)},
        tags=["Calls"],
    )
    def delete(self, request, id):
        call = selectors.call_get(org=self.org, call_id=id)
        call_content_delete(call=call, parts=[TRANSCRIPT, RECORDING], reason="request")
        return Response(status=204)


class OrderStatusView(OrgAPIView):
    @extend_schema(
        operation_id="calls_order_status",
        summary="Change an order's status",
        description="Body `{\"status\": \"in_progress\"|\"fulfilled\"|\"canceled\"|\"new\"}`. Allowed moves: "
        "new -> in_progress, fulfilled or canceled; in_progress -> fulfilled or canceled; fulfilled and canceled "
        "are final. The current status again is 200 with no event; any other move is 409 `invalid_transition`. "
        "A call without an order is 404. A change emits `call_order.status_changed` with `changed_by` = this "
        "key's id and, on cancellation, `canceled_by: team_via_api`.",
        parameters=[ID_PARAMETER],
        request=OrderStatusInputSerializer,
        responses={200: envelope(OrderSerializer), **error_responses(400, 403, 404, 409)},
        tags=["Calls"],
    )
    def patch(self, request, id):
        data = self.validate_body(OrderStatusInputSerializer)
        call = selectors.call_get(org=self.org, call_id=id)
        order, _ = order_set_status(
            call=call, status=data["status"], changed_by=str(self.api_key.id), source=CancelSource.TEAM_VIA_API
        )
        return data_response(OrderSerializer(order).data)
