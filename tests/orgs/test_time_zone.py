"""An organization's time zone: its first location sets it, an admin changes it (audited), and only an IANA name
is kept."""

import pytest

from audit.models import AuditEvent
from core.errors import ValidationFailed
from core.timezones import INVALID_MESSAGE
from knowledge.services import location_create
from orgs.errors import NotAnAdmin
from orgs.models import Organization
from orgs.services import organization_update

pytestmark = pytest.mark.django_db


def _location(org, name, zone, actor=None):
    return location_create(org=org, name=name, address="1 Main St", timezone=zone, phone_number="+14155550100",
                           actor=actor)


def _zone(org) -> str:
    return Organization.objects.get(pk=org.pk).time_zone


def _zone_entries(org) -> list:
    return [entry.changes for entry in AuditEvent.objects.for_org(org).filter(action="organization.updated")
            .order_by("occurred_at", "id")]


def test_the_first_location_sets_the_zone_and_later_ones_do_not(org, admin):
    assert _zone(org) == "UTC"
    _location(org, "Venice Beach", "America/Los_Angeles", actor=admin)
    assert _zone(org) == "America/Los_Angeles"
    _location(org, "Paris", "Europe/Paris", actor=admin)
    assert _zone(org) == "America/Los_Angeles"
    assert _zone_entries(org) == [{"time_zone": ["UTC", "America/Los_Angeles"]}]


def test_a_zone_chosen_before_the_first_location_stays(org, admin):
    organization_update(org=org, by=admin, time_zone="Europe/Berlin")
    _location(org, "Venice Beach", "America/Los_Angeles", actor=admin)
    assert _zone(org) == "Europe/Berlin"


def test_another_orgs_first_location_leaves_this_org_alone(org, other_org, admin):
    _location(other_org, "Paris", "Europe/Paris")
    assert (_zone(org), _zone(other_org)) == ("UTC", "Europe/Paris")


def test_an_admin_changes_the_zone_and_the_trail_says_so(org, admin):
    organization_update(org=org, by=admin, time_zone="Asia/Tokyo")
    assert _zone(org) == "Asia/Tokyo"
    assert str(Organization.objects.get(pk=org.pk).zone) == "Asia/Tokyo"
    assert _zone_entries(org) == [{"time_zone": ["UTC", "Asia/Tokyo"]}]


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "", "america/los_angeles", "PST8PDT ", None, 5])
def test_anything_but_an_iana_name_is_refused_and_nothing_changes(org, admin, zone):
    with pytest.raises(ValidationFailed) as refused:
        organization_update(org=org, by=admin, time_zone=zone)
    assert refused.value.details["fieldErrors"] == {"time_zone": [INVALID_MESSAGE]}
    assert INVALID_MESSAGE == "Enter a valid IANA time zone, e.g. America/New_York."
    assert (_zone(org), _zone_entries(org)) == ("UTC", [])


def test_a_member_cannot_change_the_zone(org, member):
    with pytest.raises(NotAnAdmin):
        organization_update(org=org, by=member, time_zone="Asia/Tokyo")
    assert _zone(org) == "UTC"
