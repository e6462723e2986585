"""`GET /v1/calls/{id}/events`: every event a call caused, oldest first, each with its deliveries: whether the call
reached the organization's systems."""

from drf_spectacular.utils import extend_schema

from api.docs import error_responses, list_envelope
from api.views import OrgAPIView, list_response
from calls.models import Call
from webhooks import feed
from webhooks.api.events import event_with_deliveries
from webhooks.api.serializers import EventWithDeliveriesSerializer

from .views import ID_PARAMETER


class CallEventsView(OrgAPIView):
    model = Call

    @extend_schema(
        operation_id="call_events_list",
        summary="A call's events and their deliveries",
        description="Every event of the call from the last 30 days, oldest first, exactly as delivered, each with "
        "one entry per subscription it went to. All of them in one page (`has_more` is false).",
        parameters=[ID_PARAMETER],
        responses={200: list_envelope(EventWithDeliveriesSerializer), **error_responses(404)},
        tags=["Calls"],
    )
    def get(self, request, id):  # noqa: A002 - the path parameter's name
        call = self.get_object(id)
        events = feed.call_trace(org=self.org, call_id=call.pk)
        return list_response([event_with_deliveries(event) for event in events], False, None)
