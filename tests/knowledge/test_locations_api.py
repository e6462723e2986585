"""/v1/locations: list and read (locations are managed in the dashboard); and the location services."""

import pytest

from core.errors import Conflict, ValidationFailed
from core.timefmt import iso_ms
from knowledge import services
from knowledge.models import Fact
from orgs.models import Location
from tests.support.knowledge import knowledge_version


def location_body(location: Location) -> dict:
    return {
        "id": str(location.id),
        "name": location.name,
        "address": location.address,
        "timezone": location.timezone,
        "phone_number": location.phone_number,
        "weekly_hours": location.weekly_hours,
        "created_at": iso_ms(location.created_at),
        "updated_at": iso_ms(location.updated_at),
    }


def test_get_one(api, location):
    response = api.get(f"/v1/locations/{location.id}")
    assert response.status_code == 200
    assert response.json() == {"data": location_body(location)}
    assert response.json()["data"]["phone_number"] == "+14155550100"


def test_a_location_shows_its_opening_hours_as_stored(api, location):
    hours = [{"day": "mon", "start": "09:00", "end": "17:00"}, {"day": "sat", "start": "10:00", "end": "14:00"}]
    services.location_update(location=location, weekly_hours=hours)
    response = api.get(f"/v1/locations/{location.id}")
    assert response.status_code == 200
    assert response.json()["data"]["weekly_hours"] == hours
    assert api.get("/v1/locations").json()["data"][0]["weekly_hours"] == hours


def test_list_shows_only_the_orgs_locations_newest_first(api, org, location, other_location):
    newer = services.location_create(
        org=org, name="Uptown", address="9 High St", timezone="America/New_York", phone_number="+12125550100"
    )
    assert api.get("/v1/locations").json() == {
        "data": [location_body(newer), location_body(location)],
        "has_more": False,
        "next_cursor": None,
    }


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_locations_are_read_only_through_the_api(api, location, method):
    path = "/v1/locations" if method == "post" else f"/v1/locations/{location.id}"
    response = getattr(api, method)(path, {"name": "x"}, format="json")
    assert response.status_code == 405
    assert response.json() == {"error": "method_not_allowed"}


def test_location_name_is_unique_per_org(org, other_org, location):
    with pytest.raises(Conflict) as raised:
        services.location_create(org=org, name="Downtown", address="a", timezone="UTC", phone_number="+14155550101")
    assert raised.value.details == {"field": "name"}
    services.location_create(org=other_org, name="Downtown", address="a", timezone="UTC", phone_number="+14155550101")


@pytest.mark.parametrize("zone", ["Mars/Olympus", "", "../etc/passwd", "America/New York"])
def test_timezone_must_be_iana(org, zone):
    with pytest.raises(ValidationFailed) as raised:
        services.location_create(org=org, name="x", address="a", timezone=zone, phone_number="+14155550101")
    assert "timezone" in raised.value.details["fieldErrors"]
    assert not Location.objects.exists()


def test_location_writes_bump_the_knowledge_version(org, location):
    before = knowledge_version(org)
    services.location_update(location=location, timezone="America/Denver")
    assert knowledge_version(org) == before + 1
    fact = services.fact_create(org=org, label="Parking", content="x", location=location)
    services.location_delete(location=location)
    assert knowledge_version(org) == before + 3
    fact.refresh_from_db()
    assert fact.location_id is None  # the fact survives, now for the whole org
    assert Fact.objects.count() == 1
