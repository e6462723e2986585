"""The /v1 shapes of the knowledge base: locations, facts, team members."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers import OutputModelSerializer, StrictInputSerializer
from core.sqljson import column
from knowledge.models import Fact, TeamMember
from knowledge.weekly_hours import DAYS
from orgs.models import Location


def service_args(data: dict, **renamed: str) -> dict:
    """A validated body as the service's keyword arguments: the API's `<relation>_id` names become the
    service's (`service_args(data, location_id="location")`)."""
    return {renamed.get(key, key): value for key, value in data.items()}


# --- Output shapes (docs/api.md#resources) -----------------------------------------------------------------------


@extend_schema_field({"type": "array", "description": "Local times in the location's time zone; empty: open every "
                      "hour.", "items": {
                          "type": "object", "additionalProperties": False, "required": ["day", "start", "end"],
                          "properties": {"day": {"type": "string", "enum": list(DAYS)},
                                         "start": {"type": "string"}, "end": {"type": "string"}}}})
class WeeklyHoursOutput(serializers.JSONField):
    """A location's opening hours, as the calendars' `weekly_hours`."""


class LocationSerializer(OutputModelSerializer):
    """A place the organization answers calls for. `timezone` is an IANA name; `phone_number` is E.164;
    `weekly_hours` its opening hours (local times in `timezone`; empty: open every hour)."""

    weekly_hours = WeeklyHoursOutput(read_only=True)

    class Meta:
        model = Location
        fields = ["id", "name", "address", "timezone", "phone_number", "weekly_hours", "created_at", "updated_at"]


class FactSerializer(OutputModelSerializer):
    """One entry of the knowledge base. `label` is unique per location (and among facts without one, which every
    location sees beside its own); `location_id` null = every location."""

    location_id = serializers.UUIDField(allow_null=True, read_only=True)

    class Meta:
        model = Fact
        fields = ["id", "label", "content", "location_id", "created_at", "updated_at"]


class TeamMemberSerializer(OutputModelSerializer):
    """A person calls are routed to and messages are taken for."""

    is_platform_user = serializers.BooleanField(
        read_only=True, help_text="Linked to a dashboard login; such a member cannot be changed through the API."
    )
    sql_fields = {"is_platform_user": f"{column(TeamMember, 'user')} IS NOT NULL"}

    class Meta:
        model = TeamMember
        fields = ["id", "name", "email", "phone_number", "role", "is_platform_user", "created_at", "updated_at"]


# --- Input shapes (unknown keys are refused; caps: docs/api.md#limits) ------------------------------------------


class FactInputSerializer(StrictInputSerializer):
    """POST and PUT: `label` and `content` required; `location_id` optional (null = the whole organization).
    PATCH: any subset. A PUT replaces the fact, so an omitted `location_id` becomes null."""

    label = serializers.CharField(max_length=200, help_text="Unique per organization.")
    content = serializers.CharField(max_length=10_000)
    location_id = serializers.UUIDField(
        required=False, allow_null=True, help_text="A location of this organization; null for every location."
    )


class TeamMemberInputSerializer(StrictInputSerializer):
    """POST: `name` required. PATCH: any subset. The phone is normalized to E.164 in the org's region."""

    name = serializers.CharField(max_length=200)
    email = serializers.EmailField(max_length=254, required=False, allow_null=True, allow_blank=True)
    phone_number = serializers.CharField(max_length=32, required=False, allow_null=True, allow_blank=True)
    role = serializers.CharField(max_length=200, required=False, allow_null=True, allow_blank=True)
