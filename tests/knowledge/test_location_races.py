"""A location deleted while a fact, a calendar or an escalation rule is being pointed at it: the link comes first
(the delete then unlinks or removes what links to it) or the delete does (the link is 404); never a commit-time
foreign-key error (a 500). Five rounds of each, two threads released together."""


import pytest

from audit.models import AuditEvent
from core.errors import NotFound
from knowledge.models import Calendar, EscalationRule, Fact
from knowledge.services import (
    calendar_create,
    escalation_rule_create,
    fact_create,
    fact_update,
    location_create,
    location_delete,
)
from orgs.models import Location, Organization
from tests.factories import OrganizationFactory
from tests.support.races import run_together

pytestmark = pytest.mark.django_db(transaction=True)


def race(delete, link):
    def named(outcome) -> str:  # any outcome but done or not_found is the failure this test looks for
        if isinstance(outcome, NotFound):
            return "not_found"
        return repr(outcome) if isinstance(outcome, Exception) else "done"

    results = dict(zip(("delete", "link"), map(named, run_together(delete, link)), strict=True))
    assert results["delete"] == "done" and results["link"] in ("done", "not_found"), results
    return results["link"]


def new_location(org, n):
    return location_create(org=org, name=f"Place {n}", address="1 Main St", timezone="UTC",
                           phone_number="+14155550100")


@pytest.mark.parametrize("kind", ["fact", "calendar", "rule"])
def test_linking_to_a_location_being_deleted_never_fails_with_a_database_error(org, kind):
    fact = fact_create(org=org, label="Hours", content="9-5")
    for n in range(5):
        location = new_location(org, n)
        link = {
            "fact": lambda location=location: fact_update(fact=Fact.objects.get(pk=fact.pk), location=location.pk),
            "calendar": lambda location=location, n=n: calendar_create(org=org, name=f"Cal {n}", location=location.pk),
            "rule": lambda location=location, n=n: escalation_rule_create(
                org=org, name=f"Rule {n}", destination_type="phone", destination_phone="+14155550100",
                keywords=["x"], location=location.pk),
        }[kind]
        race(lambda location=location: location_delete(location=Location.objects.get(pk=location.pk)), link)
        assert not Location.objects.filter(pk=location.pk).exists()
    # Whatever won, nothing points at a deleted location.
    assert not Fact.objects.filter(location__isnull=False).exists()
    assert not Calendar.objects.filter(location__isnull=False).exists()
    assert not EscalationRule.objects.filter(location__isnull=False).exists()


def test_two_first_locations_at_once_give_the_org_one_zone_recorded_once():
    def first_location(org, zone):
        return lambda: location_create(org=org, name=zone, address="1 Main St", timezone=zone,
                                       phone_number="+14155550100")

    for n in range(5):
        org = OrganizationFactory(name=f"Race {n}")
        outcomes = run_together(first_location(org, "America/Los_Angeles"), first_location(org, "Europe/Paris"))
        assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
        zone = Organization.objects.get(pk=org.pk).time_zone
        assert zone in ("America/Los_Angeles", "Europe/Paris")
        assert Location.objects.filter(organization=org).count() == 2
        assert [e.changes for e in AuditEvent.objects.for_org(org).filter(action="organization.updated")] == [
            {"time_zone": ["UTC", zone]}]
