"""orgs 0009 gives every existing organization its first location's time zone, and UTC to one without a location."""

from datetime import UTC, datetime

import pytest

from orgs.models import Organization
from tests.support.migrations import graph, migrate

BEFORE = ("orgs", "0008_api_key_audit_scope")


@pytest.mark.django_db(transaction=True)
def test_existing_orgs_take_their_first_locations_zone_else_utc():
    leaves = graph().leaf_nodes()
    apps = migrate([BEFORE])
    Org = apps.get_model("orgs", "Organization")
    Location = apps.get_model("knowledge", "Location")
    with_locations, without = Org.objects.create(name="Two places"), Org.objects.create(name="Nowhere yet")
    for name, zone, created in [("Later", "Europe/Paris", datetime(2030, 2, 1, tzinfo=UTC)),
                                ("First", "America/Los_Angeles", datetime(2030, 1, 1, tzinfo=UTC))]:
        location = Location.objects.create(organization=with_locations, name=name, address="1 Main St",
                                           timezone=zone, phone_number="+14155550100")
        Location.objects.filter(pk=location.pk).update(created_at=created)  # auto_now_add ignores a given value

    migrate(leaves)

    assert Organization.objects.get(pk=with_locations.pk).time_zone == "America/Los_Angeles"
    assert Organization.objects.get(pk=without.pk).time_zone == "UTC"
    assert str(Organization.objects.get(pk=with_locations.pk).zone) == "America/Los_Angeles"
