"""/v1/bookings: the bookings the agent made into the calendars (knowledge/api/calendars.py), which a client lists
and cancels."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers

from api.docs import envelope, error_responses, list_envelope
from api.serializers import OutputModelSerializer, RangeDateTimeField, StrictInputSerializer, serializer_item
from api.views import ListParams, OrgAPIView, data_response, item_list_response
from calls import selectors
from calls.models import Booking
from calls.services import bookings

BOOKING_TAGS = ["Bookings"]
ID_PARAMETER = OpenApiParameter(
    "id", OpenApiTypes.UUID, OpenApiParameter.PATH, description="The resource id. Another organization's id is 404."
)


class BookingSerializer(OutputModelSerializer):
    """An appointment the agent booked on a call. `status`: confirmed or canceled."""

    call_id = serializers.UUIDField(allow_null=True, read_only=True)
    calendar_id = serializers.UUIDField(allow_null=True, read_only=True, help_text="null once the calendar is deleted.")
    location_id = serializers.UUIDField(allow_null=True, read_only=True)
    contact_id = serializers.UUIDField(allow_null=True, read_only=True)

    class Meta:
        model = Booking
        fields = ["id", "call_id", "calendar_id", "location_id", "contact_id", "start_at", "end_at", "timezone",
                  "contact_name", "contact_email", "contact_phone", "status", "created_at", "updated_at"]


class CancelInput(StrictInputSerializer):
    """No fields: a body, if any, is `{}`."""


class BookingParams(ListParams):
    calendar_id = serializers.UUIDField(required=False)
    location_id = serializers.UUIDField(required=False)
    contact_id = serializers.UUIDField(required=False)
    status = serializers.ChoiceField(choices=Booking.Status.choices, required=False)
    since = RangeDateTimeField(required=False, help_text="start_at at or after (ISO 8601).")
    until = RangeDateTimeField(required=False, help_text="start_at at or before (ISO 8601).")


BOOKING_RESPONSE = envelope(BookingSerializer)


class BookingListView(OrgAPIView):
    filter_params = BookingParams
    time_field = "start_at"

    @extend_schema(
        operation_id="bookings_list", summary="List bookings", tags=BOOKING_TAGS,
        description="Latest start first; cursor-paginated; `since`/`until` filter on `start_at` (inclusive).",
        parameters=[BookingParams], responses={200: list_envelope(BookingSerializer), **error_responses(400)},
    )
    def get(self, request):
        params = self.validate_query(self.filter_params)
        return item_list_response(self.rows(params), params, item=serializer_item(BookingSerializer),
                                  time_field=self.time_field, scope="bookings")

    def rows(self, params: dict):
        """The bookings the query selects, unordered (paged here, streamed by the export)."""
        return selectors.booking_list(org=self.org, **self.filter_params.filters(params))


class BookingDetailView(OrgAPIView):
    model = Booking

    @extend_schema(operation_id="bookings_retrieve", summary="Get a booking", tags=BOOKING_TAGS,
                   parameters=[ID_PARAMETER], responses={200: BOOKING_RESPONSE, **error_responses(404)})
    def get(self, request, id):  # noqa: A002
        return data_response(BookingSerializer(self.get_object(id)).data)


class BookingCancelView(OrgAPIView):
    model = Booking

    @extend_schema(
        operation_id="bookings_cancel", summary="Cancel a booking", tags=BOOKING_TAGS, request=None,
        description="200 with the booking, now canceled; canceling a canceled booking is 200 and changes nothing. "
        "The slot is free again for the agent.",
        parameters=[ID_PARAMETER], responses={200: BOOKING_RESPONSE, **error_responses(403, 404)},
    )
    def post(self, request, id):  # noqa: A002
        booking = self.get_object(id)
        self.validate_body(CancelInput)
        booking, _ = bookings.booking_cancel(booking=booking)
        return data_response(BookingSerializer(booking).data)
