"""/v1/calendars: the calendars the agent books into (weekly hours in their own time zone). Every change bumps the
knowledge version, so the runtime's next knowledge read serves it; the bookings made into them are calls/api."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response

from api.docs import envelope, error_responses, list_envelope
from api.serializers import OutputModelSerializer, StrictInputSerializer, serializer_item
from api.views import ListParams, OrgAPIView, data_response, item_list_response
from knowledge import selectors, services
from knowledge.models import Calendar
from knowledge.weekly_hours import DAYS, MAX_WINDOWS

from .serializers import service_args

CALENDAR_TAGS = ["Calendars"]
ID_PARAMETER = OpenApiParameter(
    "id", OpenApiTypes.UUID, OpenApiParameter.PATH, description="The resource id. Another organization's id is 404."
)
WINDOW_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["day", "start", "end"],
    "properties": {
        "day": {"type": "string", "enum": list(DAYS)},
        "start": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
        "end": {"type": "string", "pattern": "^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$"},
    },
}


@extend_schema_field({"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$", "maxLength": 64})
class TimezoneField(serializers.CharField):
    """An IANA time zone name (the service checks it against the tz database; an enum of its ~600 names breaks
    client generators, which cannot tell `GMT+0` from `GMT-0`)."""


@extend_schema_field({"type": "array", "items": WINDOW_SCHEMA, "maxItems": MAX_WINDOWS,
                      "description": "Local times in the calendar's time zone; start before end; no overlaps "
                                     "within a day; end may be 24:00."})
class WeeklyHoursField(serializers.JSONField):
    pass


class CalendarSerializer(OutputModelSerializer):
    """A calendar the agent books into. `weekly_hours` are local times in `timezone` (IANA)."""

    location_id = serializers.UUIDField(allow_null=True, read_only=True, help_text="null: not tied to a location.")
    weekly_hours = WeeklyHoursField(read_only=True)

    class Meta:
        model = Calendar
        fields = ["id", "name", "location_id", "timezone", "slot_minutes", "weekly_hours", "created_at", "updated_at"]


class CalendarInput(StrictInputSerializer):
    """POST: `name` and `timezone` required. PATCH: any subset."""

    name = serializers.CharField(max_length=200, help_text="Unique per organization.")
    location_id = serializers.UUIDField(required=False, allow_null=True)
    timezone = TimezoneField(max_length=64, help_text="An IANA name, e.g. America/New_York.")
    slot_minutes = serializers.IntegerField(min_value=5, max_value=480, required=False, default=30)
    weekly_hours = WeeklyHoursField(required=False, default=list)


def _calendar_args(data: dict) -> dict:
    return service_args(data, location_id="location", timezone="timezone_name")


CALENDAR_RESPONSE = envelope(CalendarSerializer)


class CalendarListView(OrgAPIView):
    @extend_schema(operation_id="calendars_list", summary="List calendars", tags=CALENDAR_TAGS,
                   parameters=[ListParams], responses={200: list_envelope(CalendarSerializer), **error_responses(400)})
    def get(self, request):
        params = self.validate_query(ListParams)
        return item_list_response(selectors.calendar_list(org=self.org), params,
                                  item=serializer_item(CalendarSerializer), scope="calendars")

    @extend_schema(
        operation_id="calendars_create", summary="Create a calendar", tags=CALENDAR_TAGS,
        description="Served to the runtime by its next knowledge read. A duplicate name is 409 `conflict`.",
        request=CalendarInput, responses={201: CALENDAR_RESPONSE, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request):
        data = self.validate_body(CalendarInput)
        calendar = services.calendar_create(org=self.org, actor=self.api_key, **_calendar_args(data))
        return data_response(CalendarSerializer(calendar).data, status=201)


class CalendarDetailView(OrgAPIView):
    model = Calendar

    @extend_schema(operation_id="calendars_retrieve", summary="Get a calendar", tags=CALENDAR_TAGS,
                   parameters=[ID_PARAMETER], responses={200: CALENDAR_RESPONSE, **error_responses(404)})
    def get(self, request, id):  # noqa: A002 - the path parameter
        return data_response(CalendarSerializer(self.get_object(id)).data)

    @extend_schema(operation_id="calendars_partial_update", summary="Update a calendar", tags=CALENDAR_TAGS,
                   parameters=[ID_PARAMETER], request=CalendarInput(partial=True),
                   responses={200: CALENDAR_RESPONSE, **error_responses(400, 403, 404, 409)})
    def patch(self, request, id):  # noqa: A002
        calendar = self.get_object(id)
        data = self.validate_body(CalendarInput, partial=True)
        calendar = services.calendar_update(calendar=calendar, actor=self.api_key, **_calendar_args(data))
        return data_response(CalendarSerializer(calendar).data)

    @extend_schema(
        operation_id="calendars_destroy", summary="Delete a calendar", tags=CALENDAR_TAGS,
        description="409 `conflict` (`details.field` = `bookings`) while it has upcoming confirmed bookings; past "
        "and canceled bookings stay, their `calendar_id` null.",
        parameters=[ID_PARAMETER], responses={204: None, **error_responses(403, 404, 409)},
    )
    def delete(self, request, id):  # noqa: A002
        services.calendar_delete(calendar=self.get_object(id), actor=self.api_key)
        return Response(status=204)
