"""The event feed, one event with its deliveries, and the event catalog: read-scope views over webhooks.feed."""

from drf_spectacular.utils import extend_schema, inline_serializer

from api.docs import envelope, error_responses, list_envelope
from api.views import OrgAPIView, data_response, list_response, paginate

from .. import catalog, feed
from .serializers import EventFeedParams, EventSerializer, EventTypeSerializer, EventWithDeliveriesSerializer

TAGS = ["Events"]


def event_with_deliveries(event) -> dict:
    return {**feed.envelope(event), "deliveries": [feed.delivery_summary(d) for d in event.delivery_list]}


class EventListView(OrgAPIView):
    @extend_schema(
        tags=TAGS,
        summary="List events",
        description="The organization's events of the last 30 days, newest first, each exactly as delivered (a "
        "credential for the receivers alone, a meeting dispatch's status token, reads `redacted`). "
        "`since`/`until` bound `created_at`, both inclusive.",
        operation_id="events_list",
        parameters=[EventFeedParams],
        responses={200: list_envelope(EventSerializer), **error_responses(400)},
    )
    def get(self, request):
        params = self.validate_query(EventFeedParams)
        filters = {k: params.get(k) for k in ("type", "since", "until", "call_id")}
        rows, has_more, cursor = paginate(feed.event_feed(org=self.org, **filters), params, scope="events")
        return list_response([feed.envelope(event) for event in rows], has_more, cursor)


class EventDetailView(OrgAPIView):
    @extend_schema(
        tags=TAGS,
        summary="Get an event with its deliveries",
        description="404 for another organization's event and for events older than 30 days.",
        responses={200: envelope(EventWithDeliveriesSerializer), **error_responses(404)},
    )
    def get(self, request, pk):
        return data_response(event_with_deliveries(feed.event_get(org=self.org, event_id=pk)))


class EventTypeListView(OrgAPIView):
    @extend_schema(
        tags=TAGS,
        summary="The event catalog",
        description="Every event type (the spec's nine, then the alerts' and the operational ones), each with a JSON "
        "Schema (2020-12) of its envelope.",
        operation_id="event_types_list",
        responses={
            200: inline_serializer(name="EventTypeList", fields={"data": EventTypeSerializer(many=True)}),
            **error_responses(),
        },
    )
    def get(self, request):
        return data_response(catalog.catalog())
