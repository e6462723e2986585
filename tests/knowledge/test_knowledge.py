"""The runtime's view of the knowledge base: one ETag that changes with every fact, location and team write."""

import pytest

from core.errors import Conflict, Forbidden
from knowledge import selectors, services
from orgs.models import Organization
from tests.support.knowledge import knowledge_version


def test_every_knowledge_write_bumps_the_version_and_changes_the_etag(org, admin):
    etags = [selectors.knowledge_for_org(org)[0]]

    def changed():
        etag = selectors.knowledge_for_org(org)[0]
        assert etag not in etags
        etags.append(etag)

    location = services.location_create(org=org, name="A", address="a", timezone="UTC", phone_number="+14155550100")
    changed()
    services.location_update(location=location, name="B")
    changed()
    fact = services.fact_create(org=org, label="L", content="c", location=location)
    changed()
    services.fact_update(fact=fact, content="d")
    changed()
    member = services.team_member_create(org=org, name="T")
    changed()
    services.team_member_update(member=member, role="Chef")
    changed()
    services.team_member_delete(member=member)
    changed()
    services.fact_delete(fact=fact)
    changed()
    services.location_delete(location=location)
    changed()
    assert knowledge_version(org) == 9


def test_reads_and_failed_writes_leave_the_etag_alone(org, fact):
    etag = selectors.knowledge_for_org(org)[0]
    selectors.knowledge_for_org(org)
    with pytest.raises(Conflict):
        services.fact_create(org=org, label=fact.label, content="dup")
    assert selectors.knowledge_for_org(org)[0] == etag


def test_another_orgs_writes_do_not_change_this_orgs_etag(org, other_org):
    etag = selectors.knowledge_for_org(org)[0]
    services.fact_create(org=other_org, label="x", content="y")
    assert selectors.knowledge_for_org(org)[0] == etag


def test_a_fact_changed_through_the_api_is_in_the_next_knowledge_read(api, org, fact):
    etag, before = selectors.knowledge_for_org(org)
    assert [f["content"] for f in before["facts"]] == [fact.content]
    assert api.patch(f"/v1/facts/{fact.id}", {"content": "Closed on Mondays."}, format="json").status_code == 200
    new_etag, after = selectors.knowledge_for_org(org)
    assert new_etag != etag
    assert [f["content"] for f in after["facts"]] == ["Closed on Mondays."]


def test_knowledge_holds_facts_locations_and_team_members_of_the_org_only(
    org, location, fact, team_member, platform_member, other_fact, other_location, other_team_member
):
    etag, knowledge = selectors.knowledge_for_org(org)
    assert etag == selectors.knowledge_etag(org)
    assert etag.startswith(f'"knowledge-{Organization.objects.get(pk=org.pk).knowledge_version}.')
    assert [f["id"] for f in knowledge["facts"]] == [str(fact.id)]
    assert [loc["id"] for loc in knowledge["locations"]] == [str(location.id)]
    assert {m["name"]: m["is_platform_user"] for m in knowledge["team_members"]} == {
        "Dana Cook": False, "Pat Platform": True,
    }
    assert set(knowledge["facts"][0]) == {"id", "label", "content", "location_id", "created_at", "updated_at"}


def test_a_platform_user_is_refused_by_the_services_whoever_calls(org, platform_member):
    before = knowledge_version(org)
    with pytest.raises(Forbidden):
        services.team_member_update(member=platform_member, name="x")
    with pytest.raises(Forbidden):
        services.team_member_delete(member=platform_member)
    platform_member.refresh_from_db()
    assert platform_member.name == "Pat Platform"
    assert knowledge_version(org) == before


def test_knowledge_read_is_a_constant_number_of_queries(org, location, fact, team_member, django_assert_num_queries):
    with django_assert_num_queries(4):
        selectors.knowledge_for_org(org)
