"""/v1 views of the knowledge base: locations, facts, team members. Thin: validate, call, render."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from api.docs import envelope, error_responses, list_envelope
from api.serializers import serializer_item
from api.views import ListParams, OrgAPIView, data_response, item_list_response
from knowledge import selectors, services
from knowledge.models import Fact, TeamMember
from orgs.models import Location

from .serializers import (
    FactInputSerializer,
    FactSerializer,
    LocationSerializer,
    TeamMemberInputSerializer,
    TeamMemberSerializer,
    service_args,
)

# One component per envelope: drf-spectacular warns about (and mis-renders) two inline serializers of one name.
LOCATION_RESPONSE = envelope(LocationSerializer)
FACT_RESPONSE = envelope(FactSerializer)
TEAM_MEMBER_RESPONSE = envelope(TeamMemberSerializer)
ID_PARAMETER = OpenApiParameter(
    "id", OpenApiTypes.UUID, OpenApiParameter.PATH, description="The resource id. Another organization's id is 404."
)
LIST_DESCRIPTION = (
    " Newest first; cursor-paginated: pass `next_cursor` back as `cursor` while `has_more` is true. "
    "`limit` is 1 to 100 (default 20); unknown query parameters are refused with 400."
)


def _page(view, queryset, serializer_class, params_class=ListParams, scope=""):
    params = view.validate_query(params_class)
    return item_list_response(queryset, params, item=serializer_item(serializer_class), scope=scope)


# --- Locations (read-only here; managed in the dashboard) -----------------------------------------------------


class LocationListView(OrgAPIView):
    @extend_schema(
        operation_id="locations_list",
        summary="List locations",
        description="The organization's locations." + LIST_DESCRIPTION,
        parameters=[ListParams],
        responses={200: list_envelope(LocationSerializer), **error_responses(400)},
        tags=["Locations"],
    )
    def get(self, request):
        return _page(self, selectors.location_list(org=self.org), LocationSerializer, scope="locations")


class LocationDetailView(OrgAPIView):
    model = Location

    @extend_schema(
        operation_id="locations_retrieve",
        summary="Get a location",
        parameters=[ID_PARAMETER],
        responses={200: LOCATION_RESPONSE, **error_responses(404)},
        tags=["Locations"],
    )
    def get(self, request, id):
        return data_response(LocationSerializer(self.get_object(id)).data)


# --- Facts (the knowledge base; the agent uses a change on its next knowledge read) ---------------------------


def _fact_changes(data: dict) -> dict:
    return service_args(data, location_id="location")


class FactListView(OrgAPIView):
    @extend_schema(
        operation_id="facts_list",
        summary="List facts",
        description="The knowledge base the agent answers from." + LIST_DESCRIPTION,
        parameters=[ListParams],
        responses={200: list_envelope(FactSerializer), **error_responses(400)},
        tags=["Facts"],
    )
    def get(self, request):
        return _page(self, selectors.fact_list(org=self.org), FactSerializer, scope="facts")

    @extend_schema(
        operation_id="facts_create",
        summary="Create a fact",
        description="The agent uses the new fact on its next knowledge read (within seconds). "
        "A label already used in the organization gives 409; a `location_id` that is not one of the "
        "organization's locations gives 404.",
        request=FactInputSerializer,
        responses={201: FACT_RESPONSE, **error_responses(400, 403, 404, 409)},
        tags=["Facts"],
    )
    def post(self, request):
        data = self.validate_body(FactInputSerializer)
        fact = services.fact_create(org=self.org, actor=self.api_key, **_fact_changes(data))
        return data_response(FactSerializer(fact).data, status=201)


class FactDetailView(OrgAPIView):
    model = Fact

    @extend_schema(
        operation_id="facts_retrieve",
        summary="Get a fact",
        parameters=[ID_PARAMETER],
        responses={200: FACT_RESPONSE, **error_responses(404)},
        tags=["Facts"],
    )
    def get(self, request, id):
        return data_response(FactSerializer(self.get_object(id)).data)

    @extend_schema(
        operation_id="facts_partial_update",
        summary="Update a fact",
        description="Changes the fields given. Duplicate label: 409.",
        parameters=[ID_PARAMETER],
        request=FactInputSerializer(partial=True),
        responses={200: FACT_RESPONSE, **error_responses(400, 403, 404, 409)},
        tags=["Facts"],
    )
    def patch(self, request, id):
        fact = self.get_object(id)
        data = self.validate_body(FactInputSerializer, partial=True)
        fact = services.fact_update(fact=fact, actor=self.api_key, **_fact_changes(data))
        return data_response(FactSerializer(fact).data)

    @extend_schema(
        operation_id="facts_update",
        summary="Replace a fact",
        description="Replaces the fact: `label` and `content` are required, and an omitted `location_id` "
        "becomes null. Duplicate label: 409.",
        parameters=[ID_PARAMETER],
        request=FactInputSerializer,
        responses={200: FACT_RESPONSE, **error_responses(400, 403, 404, 409)},
        tags=["Facts"],
    )
    def put(self, request, id):
        fact = self.get_object(id)
        data = self.validate_body(FactInputSerializer)
        data.setdefault("location_id", None)
        fact = services.fact_update(fact=fact, actor=self.api_key, **_fact_changes(data))
        return data_response(FactSerializer(fact).data)

    @extend_schema(
        operation_id="facts_destroy",
        summary="Delete a fact",
        parameters=[ID_PARAMETER],
        responses={204: None, **error_responses(403, 404)},
        tags=["Facts"],
    )
    def delete(self, request, id):
        services.fact_delete(fact=self.get_object(id), actor=self.api_key)
        return Response(status=204)


# --- Team members ----------------------------------------------------------------------------------------------


class TeamMemberListView(OrgAPIView):
    @extend_schema(
        operation_id="team_members_list",
        summary="List team members",
        description="People calls are routed to and messages are taken for." + LIST_DESCRIPTION,
        parameters=[ListParams],
        responses={200: list_envelope(TeamMemberSerializer), **error_responses(400)},
        tags=["Team members"],
    )
    def get(self, request):
        return _page(self, selectors.team_member_list(org=self.org), TeamMemberSerializer, scope="team-members")

    @extend_schema(
        operation_id="team_members_create",
        summary="Create a team member",
        description="Creates a team member who is not a platform user (platform users are linked in the dashboard).",
        request=TeamMemberInputSerializer,
        responses={201: TEAM_MEMBER_RESPONSE, **error_responses(400, 403)},
        tags=["Team members"],
    )
    def post(self, request):
        data = self.validate_body(TeamMemberInputSerializer)
        member = services.team_member_create(org=self.org, actor=self.api_key, **data)
        return data_response(TeamMemberSerializer(member).data, status=201)


class TeamMemberDetailView(OrgAPIView):
    model = TeamMember

    @extend_schema(
        operation_id="team_members_retrieve",
        summary="Get a team member",
        parameters=[ID_PARAMETER],
        responses={200: TEAM_MEMBER_RESPONSE, **error_responses(404)},
        tags=["Team members"],
    )
    def get(self, request, id):
        return data_response(TeamMemberSerializer(self.get_object(id)).data)

    @extend_schema(
        operation_id="team_members_partial_update",
        summary="Update a team member",
        description="Changes the fields given. A team member who is a platform user cannot be changed: 403 "
        "`forbidden`.",
        parameters=[ID_PARAMETER],
        request=TeamMemberInputSerializer(partial=True),
        responses={200: TEAM_MEMBER_RESPONSE, **error_responses(400, 403, 404)},
        tags=["Team members"],
    )
    def patch(self, request, id):
        member = self.get_object(id)
        data = self.validate_body(TeamMemberInputSerializer, partial=True)
        member = services.team_member_update(member=member, actor=self.api_key, **data)
        return data_response(TeamMemberSerializer(member).data)

    @extend_schema(
        operation_id="team_members_destroy",
        summary="Delete a team member",
        description="A team member who is a platform user cannot be deleted through the API: 403 `forbidden`.",
        parameters=[ID_PARAMETER],
        responses={204: None, **error_responses(403, 404)},
        tags=["Team members"],
    )
    def delete(self, request, id):
        services.team_member_delete(member=self.get_object(id), actor=self.api_key)
        return Response(status=204)
