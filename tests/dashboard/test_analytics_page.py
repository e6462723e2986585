"""The dashboard's Analytics page (issue 29, part 2): the figures per location over a chosen range, as SVG charts
with the numbers behind them, each figure a link to the calls list that lists exactly the calls it counts."""

from datetime import date

import pytest

from calls.analytics import call_analytics
from calls.models import Call
from knowledge.services import location_create
from orgs.models import Organization
from tests.factories import MembershipFactory
from tests.support.analytics import generate_calls
from tests.support.clients import logged_in

pytestmark = pytest.mark.django_db
RANGE = {"since": "2026-09-25", "until": "2026-11-07"}


@pytest.fixture
def world(org, other_org):
    la = location_create(org=org, name="LA", address="1 Main St", timezone="America/Los_Angeles",
                         phone_number="+13105550100")
    sf = location_create(org=org, name="SF", address="2 Main St", timezone="America/Los_Angeles",
                         phone_number="+14155550100")
    Organization.objects.filter(pk=org.pk).update(time_zone="America/Los_Angeles")
    org.refresh_from_db()
    made = generate_calls(org, [la.pk, sf.pk, None], 30, seed=7)
    generate_calls(other_org, [None], 5, seed=8)
    return {"la": la, "sf": sf, "made": made}


def _listed(client, link) -> int:
    """How many calls the calls list shows for a link."""
    response = client.get(link)
    assert response.status_code == 200 and response.context["form"].is_valid(), link
    return response.context["page"].paginator.count


def test_each_figure_links_to_the_calls_it_counts(member_client, org, world):
    response = member_client.get("/analytics/", RANGE)
    assert response.status_code == 200
    body = response.content.decode()
    assert body.count('data-testid="figure-chart"') == 8 and "<svg" in body and "Show the numbers" in body
    rows = {row["label"]: row for row in response.context["rows"]}
    assert set(rows) == {"LA", "SF", "No location"}
    expected = call_analytics(org=org, since=date(2026, 9, 25), until=date(2026, 11, 7), group_by="location")
    by_location = {bucket["key"]: bucket for bucket in expected["buckets"]}
    for name, location in (("LA", world["la"]), ("SF", world["sf"])):
        row, figures = rows[name], by_location[str(location.pk)]
        assert row["raw"] == figures
        cells = {cell["figure"]: cell for cell in row["cells"]}
        calls = Call.objects.filter(organization=org, location=location)  # all of them are inside the range
        assert _listed(member_client, cells["calls"]["link"]) == figures["calls"]
        assert _listed(member_client, cells["real_engagements"]["link"]) == figures["real_engagements"]
        assert _listed(member_client, cells["escalation_rate"]["link"]) == figures["escalations"]
        assert _listed(member_client, cells["orders"]["link"]) == figures["orders"]
        booked = calls.filter(bookings__isnull=False).distinct().count()
        assert _listed(member_client, cells["bookings"]["link"]) == booked
        assert _listed(member_client, cells["unanswered_questions"]["link"]) == calls.exclude(
            unanswered_questions=[]).count()
        for outcome, cell in zip(sorted(expected["totals"]["outcomes"]), row["outcomes"], strict=True):
            assert _listed(member_client, cell["link"]) == figures["outcomes"].get(outcome, 0) == cell["count"]
    # Calls without a location are counted, but the list cannot select them: no link rather than a wrong one.
    assert all(cell["link"] is None for cell in rows["No location"]["cells"])
    totals = response.context["totals"]
    assert totals["raw"] == expected["totals"]
    assert _listed(member_client, totals["cells"][0]["link"]) == expected["totals"]["calls"]


def test_one_location_and_another_orgs_calls(member_client, org, world):
    response = member_client.get("/analytics/", {**RANGE, "location": str(world["sf"].pk)})
    rows = response.context["rows"]
    assert [row["label"] for row in rows] == ["SF"]
    assert response.context["totals"]["raw"]["calls"] == Call.objects.filter(
        organization=org, location=world["sf"]).count()


@pytest.mark.parametrize(("params", "field", "message"), [
    ({"since": "2026-02-01", "until": "2026-01-31"}, "until", "The end date must not be before the start date."),
    ({"since": "2025-01-01", "until": "2026-02-05"}, "until", "The range may span at most 400 days."),
    ({"location": "00000000-0000-4000-8000-000000000000"}, "location",
     "Select a valid choice. That choice is not one of the available choices."),
])
def test_a_bad_range_is_shown_beside_its_field_and_the_last_30_days_stay(member_client, params, field, message):
    response = member_client.get("/analytics/", params)
    assert response.status_code == 200
    assert response.context["form"].errors == {field: [message]}
    assert (response.context["until"] - response.context["since"]).days == 29
    assert f'data-testid="error-{field}"' in response.content.decode()


def test_the_calls_list_filters_the_links_use(member_client, org, world):
    assert _listed(member_client, "/calls/?booked=yes") == Call.objects.filter(
        organization=org, bookings__isnull=False).distinct().count()
    assert _listed(member_client, "/calls/?booked=no") == Call.objects.filter(
        organization=org, bookings__isnull=True).count()
    assert _listed(member_client, "/calls/?unanswered=yes") == Call.objects.filter(
        organization=org).exclude(unanswered_questions=[]).count()
    assert _listed(member_client, "/calls/?classification=robocall") == Call.objects.filter(
        organization=org, classification="robocall").count()
    response = member_client.get("/calls/?booked=maybe")
    assert response.context["page"] is None and "booked" in response.context["form"].errors


def test_a_location_manager_sees_only_their_locations_calls(org, world):
    manager = MembershipFactory(organization=org, role="location_manager", location_ids=[world["la"].pk])
    client = logged_in(manager.user)
    response = client.get("/analytics/", RANGE)
    assert response.status_code == 200
    assert [row["label"] for row in response.context["rows"]] == ["LA"]
    assert response.context["totals"]["raw"]["calls"] == Call.objects.filter(
        organization=org, location=world["la"]).count() > 0
    assert list(response.context["form"].fields["location"].queryset) == [world["la"]]
    # Naming the other location is refused beside the field, as any location of another org would be.
    response = client.get("/analytics/", {**RANGE, "location": str(world["sf"].pk)})
    assert "location" in response.context["form"].errors
    assert [row["label"] for row in response.context["rows"]] == ["LA"]
