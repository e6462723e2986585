"""Escalation rules an organization runs itself (issue 14, item 1): /v1/escalation-rules with its validation, the
runtime's next knowledge read serving enabled rules with their location, past escalations kept when a rule goes,
and a team member that rules route to kept too (409)."""


import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from calls.models import Escalation
from core.errors import Conflict, NotFound
from knowledge.api.escalation_rules import EscalationRuleSerializer
from knowledge.models import EscalationRule, TeamMember
from knowledge.services import (
    escalation_rule_create,
    escalation_rule_update,
    knowledge_version_bump,
    team_member_delete,
)
from orgs.models import Location
from tests.support.races import run_together
from tests.support.runtime import Runtime


def validation(field_errors=None, form_errors=None):
    return {"error": "Validation failed",
            "details": {"formErrors": form_errors or [], "fieldErrors": field_errors or {}}}


@pytest.fixture
def member(org):
    return TeamMember.objects.create(organization=org, name="Sam Manager", phone_number="+14155550111")


@pytest.fixture
def location(org):
    return Location.objects.create(organization=org, name="Mission", timezone="America/Los_Angeles",
                                   address="1 Mission St", phone_number="+14155550142")


def rule_body(member, **changes):
    return {"name": "Angry caller", "keywords": ["manager", "complaint"], "destination_type": "team_member",
            "destination_team_member_id": str(member.pk), **changes}


def test_create_read_update_delete(api, org, member, location):
    created = api.post("/v1/escalation-rules", rule_body(member, location_id=str(location.pk)), format="json")
    assert created.status_code == 201, created.content
    data = created.json()["data"]
    assert {k: v for k, v in data.items() if k not in ("id", "created_at", "updated_at")} == {
        "name": "Angry caller", "description": "", "keywords": ["manager", "complaint"], "enabled": True,
        "destination_type": "team_member", "destination_team_member_id": str(member.pk), "destination_phone": None,
        "location_id": str(location.pk)}
    assert api.get(f"/v1/escalation-rules/{data['id']}").json()["data"] == data
    assert api.get("/v1/escalation-rules").json() == {"data": [data], "has_more": False, "next_cursor": None}

    changed = api.patch(f"/v1/escalation-rules/{data['id']}", {
        "destination_type": "phone", "destination_team_member_id": None, "destination_phone": "(415) 555-0199",
        "description": "Caller mentions an allergy reaction"}, format="json")
    assert changed.status_code == 200, changed.content
    assert changed.json()["data"]["destination_phone"] == "+14155550199"
    assert changed.json()["data"]["destination_team_member_id"] is None

    assert api.delete(f"/v1/escalation-rules/{data['id']}").status_code == 204
    assert api.get(f"/v1/escalation-rules/{data['id']}").status_code == 404


def test_the_runtimes_next_read_serves_enabled_rules_with_their_location(api, org, member, location):
    runtime = Runtime(org)
    etag = runtime.knowledge()["ETag"]
    rule_id = api.post("/v1/escalation-rules", rule_body(member, location_id=str(location.pk)),
                       format="json").json()["data"]["id"]
    read = runtime.knowledge(etag)
    assert read.status_code == 200  # the version moved: no 304
    served = read.json()["data"]["escalation_rules"]
    assert [(r["id"], r["location_id"], r["keywords"]) for r in served] == [
        (rule_id, str(location.pk), ["manager", "complaint"])]

    etag = read["ETag"]
    assert api.patch(f"/v1/escalation-rules/{rule_id}", {"enabled": False}, format="json").status_code == 200
    read = runtime.knowledge(etag)
    assert read.status_code == 200 and read.json()["data"]["escalation_rules"] == []


@pytest.mark.parametrize(("changes", "errors"), [
    ({"keywords": [], "description": ""}, validation(form_errors=[
        "A rule needs keywords or a description (what the runtime listens for)."])),
    ({"keywords": ["Manager", "manager"]},
     validation({"keywords": ["Keywords must not repeat (case-insensitively)."]})),
    ({"keywords": [f"k{i}" for i in range(51)]},
     validation({"keywords": ["Ensure this field has no more than 50 elements."]})),
    ({"keywords": ["x" * 101]},
     validation({"keywords": ["Item 0: Ensure this field has no more than 100 characters."]})),
    ({"destination_team_member_id": None}, validation({"destination_team_member_id": [
        "Required when destination_type is team_member."]})),
    ({"destination_phone": "+14155550100"}, validation({"destination_phone": [
        "Must be null when destination_type is team_member."]})),
    ({"destination_type": "phone", "destination_team_member_id": None, "destination_phone": "12"}, validation({
        "destination_phone": [
            "Enter a valid phone number (E.164, or a national number of the organization's region)."]})),
    ({"destination_type": "pager"}, validation({"destination_type": ['"pager" is not a valid choice.']})),
    ({"name": "x" * 201}, validation({"name": ["Ensure this field has no more than 200 characters."]})),
    ({"description": "x" * 5001},
     validation({"description": ["Ensure this field has no more than 5000 characters."]})),
    ({"keywords": "manager"}, validation({"keywords": ['Expected a list of items but got type "str".']})),
    ({"colour": "red"}, validation(form_errors=["Unrecognized key(s) in object: 'colour'"])),
])
def test_bad_rules_are_400_and_nothing_is_written(api, member, changes, errors):
    response = api.post("/v1/escalation-rules", rule_body(member, **changes), format="json")
    assert (response.status_code, response.json()) == (400, errors)
    assert not EscalationRule.objects.exists()


def test_a_duplicate_name_is_409(api, member):
    assert api.post("/v1/escalation-rules", rule_body(member), format="json").status_code == 201
    response = api.post("/v1/escalation-rules", rule_body(member, keywords=["other"]), format="json")
    assert (response.status_code, response.json()) == (409, {"error": "conflict", "details": {"field": "name"}})
    assert EscalationRule.objects.count() == 1


def test_another_orgs_team_member_or_location_is_404_and_nothing_is_written(api, member, other_org):
    theirs = TeamMember.objects.create(organization=other_org, name="Not yours")
    their_place = Location.objects.create(organization=other_org, name="Elsewhere", timezone="UTC")
    for body in (rule_body(theirs), rule_body(member, location_id=str(their_place.pk))):
        response = api.post("/v1/escalation-rules", body, format="json")
        assert (response.status_code, response.json()) == (404, {"error": "not_found"})
    assert not EscalationRule.objects.exists()


def test_deleting_a_rule_keeps_its_past_escalations_with_its_name(api, org, member):
    rule_id = api.post("/v1/escalation-rules", rule_body(member), format="json").json()["data"]["id"]
    runtime = Runtime(org)
    call_id, _ = runtime.start()
    assert runtime.event(call_id, type="escalation_triggered", label="x", data={
        "rule_id": rule_id, "triggered_by": "keyword", "context": "Wants a manager"}).status_code == 201
    assert api.delete(f"/v1/escalation-rules/{rule_id}").status_code == 204
    escalation = Escalation.objects.get()
    assert escalation.rule_id is None and escalation.rule_name == "Angry caller"
    item = api.get("/v1/escalations").json()["data"][0]
    assert (item["rule_id"], item["rule_name"]) == (None, "Angry caller")


def test_a_team_member_rules_route_to_cannot_be_deleted(api, admin_client, org, member):
    api.post("/v1/escalation-rules", rule_body(member), format="json")
    response = api.delete(f"/v1/team-members/{member.pk}")
    assert (response.status_code, response.json()) == (409, {"error": "conflict",
                                                             "details": {"field": "escalation_rules"}})
    assert TeamMember.objects.filter(pk=member.pk).exists()
    page = admin_client.post(f"/team/{member.pk}/delete/", follow=True).content.decode()
    assert "Escalation rules route to this team member: Angry caller." in page
    assert TeamMember.objects.filter(pk=member.pk).exists()


def test_a_read_key_cannot_write_rules(read_api, member):
    response = read_api.post("/v1/escalation-rules", rule_body(member), format="json")
    assert (response.status_code, response.json()) == (403, {"error": "insufficient_scope", "required": "write"})
    assert not EscalationRule.objects.exists()


def test_list_items_are_their_serializer_and_one_query(api, org, member):
    for i in range(5):
        api.post("/v1/escalation-rules", rule_body(member, name=f"Rule {i}", keywords=[f"k{i}", "é\"q"]),
                 format="json")
    expected = [EscalationRuleSerializer(r).data for r in EscalationRule.objects.order_by("-created_at", "-id")]
    knowledge_version_bump(org=org)
    api.get("/v1/me")
    with CaptureQueriesContext(connection) as queries:
        listed = api.get("/v1/escalation-rules", {"limit": 100}).json()["data"]
    assert listed == [dict(item) for item in expected]
    assert len(queries) == 1


@pytest.mark.django_db(transaction=True)
def test_a_rule_pointed_at_a_member_being_deleted_never_dangles_nor_500s(org):
    """A member delete and a rule update pointing at that member race: the rule wins (delete 409) or the delete
    wins (update 404); never both, never a database error. Five rounds."""
    for round_ in range(5):
        member = TeamMember.objects.create(organization=org, name=f"Target {round_}")
        rule = escalation_rule_create(org=org, name=f"Base {round_}", destination_type="phone",
                                      destination_phone="+14155550100", keywords=["x"])

        def delete(member=member):
            try:
                team_member_delete(member=TeamMember.objects.get(pk=member.pk))
                return "deleted"
            except Conflict:
                return "conflict"

        def point(rule=rule, member=member):
            try:
                escalation_rule_update(rule=EscalationRule.objects.get(pk=rule.pk), destination_type="team_member",
                                       destination_phone=None, destination_team_member=member.pk)
                return "pointed"
            except NotFound:
                return "not_found"

        results = dict(zip(("delete", "point"), run_together(delete, point), strict=True))
        assert results in ({"delete": "conflict", "point": "pointed"}, {"delete": "deleted", "point": "not_found"})
        rule.refresh_from_db()
        assert (rule.destination_team_member_id is None) == (results["delete"] == "deleted")
