"""The operator's side of locations (README, Operator commands): create_location, create_api_key --locations and
simulate_calls --location."""

import json

import pytest
from django.core.management import CommandError

from calls.models import Call
from orgs.models import ApiKey, Location
from tests.support.commands import me, run


@pytest.mark.django_db
def test_create_location_prints_the_new_id_last(org):
    lines = run("create_location", "--org", str(org.id), "--name", "Downtown", "--timezone", "America/Chicago")
    location = Location.objects.get(pk=lines[-1])
    assert (location.organization_id, location.name, location.timezone) == (org.id, "Downtown", "America/Chicago")
    # Without --timezone: the organization's own zone.
    org.time_zone = "Europe/Paris"
    org.save(update_fields=["time_zone"])
    assert Location.objects.get(pk=run("create_location", "--org", str(org.id), "--name", "Uptown")[-1]).timezone \
        == "Europe/Paris"


@pytest.mark.django_db
@pytest.mark.parametrize("args", [("--name", "Downtown", "--timezone", "Mars/Olympus"), ("--name", " ")])
def test_create_location_refuses_bad_input_and_creates_nothing(org, args):
    with pytest.raises(CommandError):
        run("create_location", "--org", str(org.id), *args)
    with pytest.raises(CommandError):
        run("create_location", "--org", "not-a-uuid", "--name", "x")
    assert not Location.objects.exists()


@pytest.mark.django_db
def test_create_api_key_with_locations_makes_a_scoped_key(org, admin):
    first = run("create_location", "--org", str(org.id), "--name", "L1")[-1]
    second = run("create_location", "--org", str(org.id), "--name", "L2")[-1]
    plaintext = run("create_api_key", "--org", str(org.id), "--created-by", admin.username, "--name", "POS",
                    "--scopes", "read", "--locations", f"{first},{second}")[-1]
    assert me(plaintext).json()["data"]["location_ids"] == [first, second]


@pytest.mark.django_db
@pytest.mark.parametrize("locations", ["", "not-a-uuid", "00000000-0000-4000-8000-000000000000"])
def test_create_api_key_refuses_bad_locations(org, admin, locations):
    with pytest.raises(CommandError, match="location_ids"):
        run("create_api_key", "--org", str(org.id), "--created-by", admin.username, "--name", "POS",
            "--scopes", "read", "--locations", locations)
    assert not ApiKey.objects.exists()


@pytest.mark.django_db
def test_simulate_calls_at_one_location(org, settings):
    settings.AGENT_RUNTIME_TOKEN = settings.AGENT_RUNTIME_TOKEN or "t" * 40
    run("create_location", "--org", str(org.id), "--name", "L1")
    second = run("create_location", "--org", str(org.id), "--name", "L2")[-1]
    lines = run("simulate_calls", "--org", str(org.id), "--count", "4", "--seed", "1", "--location", second)
    ids = [json.loads(line)["call_id"] for line in lines]
    assert ids and set(Call.objects.filter(pk__in=ids).values_list("location_id", flat=True)) == {
        Location.objects.get(pk=second).pk}
    with pytest.raises(CommandError, match="No location"):
        run("simulate_calls", "--org", str(org.id), "--location", "00000000-0000-4000-8000-000000000000")
