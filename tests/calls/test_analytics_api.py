"""GET /v1/analytics/calls (issue 29, part 2): the figures equal what the test counts itself over calls it generated,
across two time zones and their DST changes; another org's calls never count; bad input is 400 with exact bodies."""

from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from rest_framework.test import APIClient

from calls.analytics import call_analytics
from calls.models import Call
from orgs.services import organization_update
from tests.factories import make_key
from tests.support.analytics import analytics_world


def validation(field_errors):
    return {"error": "Validation failed", "details": {"formErrors": [], "fieldErrors": field_errors}}


def _field(values):
    total = sum(values)
    return {"sum": int(total) if float(total).is_integer() else total, "count": len(values),
            "average": round(total / len(values), 2) if values else None}


def _figures(calls, names):
    durations = [c["duration"] for c in calls if c["duration"] is not None]
    scores = [c["score"] for c in calls if c["score"] is not None]
    escalations = sum(c["disposition"] == "escalated" for c in calls)
    outcomes = defaultdict(int)
    for c in calls:
        if c["outcome"]:
            outcomes[c["outcome"]] += 1
    return {
        "calls": len(calls),
        "real_engagements": sum(c["classification"] == "real_engagement" for c in calls),
        "outcomes": dict(sorted(outcomes.items())),
        "escalations": escalations,
        "escalation_rate": round(escalations / len(calls), 4) if calls else None,
        "average_duration_seconds": round(sum(durations) / len(durations), 1) if durations else None,
        "average_quality_score": round(sum(scores) / len(scores), 1) if scores else None,
        "bookings": sum(c["bookings"] for c in calls),
        "orders": sum(c["orders"] for c in calls),
        "unanswered_questions": sum(c["unanswered"] for c in calls),
        "fields": {name: _field([c["fields"][name] for c in calls if name in c["fields"]]) for name in sorted(names)},
    }


def _expected(made, zone, since, until, group_by):
    """The answer, counted here from the test's own record of the calls."""
    tz = ZoneInfo(zone)
    inside = [c for c in made if since <= c["started_at"].astimezone(tz).date() <= until]
    names = {name for c in inside for name in c["fields"]}
    if group_by in ("day", "week"):
        buckets = []
        day = since if group_by == "day" else since - timedelta(days=since.weekday())
        step = timedelta(days=1 if group_by == "day" else 7)
        while day <= until:
            last = day + step - timedelta(days=1)
            members = [c for c in inside if day <= c["started_at"].astimezone(tz).date() <= last]
            buckets.append({"key": day.isoformat(), "since": max(day, since).isoformat(),
                            "until": min(last, until).isoformat(), **_figures(members, names)})
            day += step
    else:
        field = "location_id" if group_by == "location" else "outcome"
        keys = {c[field] for c in inside}
        buckets = [{"key": str(key) if group_by == "location" and key else key,
                    **_figures([c for c in inside if c[field] == key], names)} for key in keys]
        buckets.sort(key=lambda b: (-b["calls"], b["key"] or ""))
    return {"since": since.isoformat(), "until": until.isoformat(), "time_zone": zone, "group_by": group_by,
            "buckets": buckets, "totals": _figures(inside, names)}


@pytest.fixture
def world(org, other_org):
    return analytics_world(org, other_org)


def test_figures_equal_the_tests_own_counts_in_two_zones_across_dst_changes(api, org, admin, world):
    since, until = date(2026, 9, 25), date(2026, 11, 7)
    for zone in ("America/Los_Angeles", "Australia/Adelaide"):
        organization_update(org=org, by=admin, time_zone=zone)  # the rollup regroups in this transaction
        for group_by in ("day", "week", "location", "outcome"):
            response = api.get("/v1/analytics/calls", {"since": since, "until": until, "group_by": group_by})
            assert response.status_code == 200, response.content
            assert response.json()["data"] == _expected(world, zone, since, until, group_by), (zone, group_by)
        # A range that cuts weeks and starts on a DST change day.
        cut = {"since": "2026-10-04", "until": "2026-11-01", "group_by": "week"}
        expected = _expected(world, zone, date(2026, 10, 4), date(2026, 11, 1), "week")
        assert api.get("/v1/analytics/calls", cut).json()["data"] == expected
    assert sum(c["bookings"] for c in world) > 0 and Call.objects.filter(organization=org).count() == len(world)
    assert any("budget" in c["fields"] for c in world)


def test_a_location_filter_another_org_and_a_read_key(api, read_api, other_api, org, other_org, world,
                                                     django_assert_num_queries):
    location_id = next(c["location_id"] for c in world if c["location_id"])
    response = api.get("/v1/analytics/calls", {"since": "2026-09-25", "until": "2026-11-07",
                                               "location_id": str(location_id), "group_by": "outcome"})
    mine = [c for c in world if c["location_id"] == location_id]
    expected = _expected(mine, "America/Los_Angeles", date(2026, 9, 25), date(2026, 11, 7), "outcome")
    assert response.json()["data"] == expected

    # Another org's calls on the same days are never counted, either way.
    data = other_api.get("/v1/analytics/calls", {"since": "2026-09-25", "until": "2026-11-07"}).json()["data"]
    assert data["totals"]["calls"] == Call.objects.filter(organization=other_org).count() == 10 + 24
    assert data["time_zone"] == "UTC"

    assert read_api.get("/v1/analytics/calls", {"group_by": "week"}).status_code == 200
    with django_assert_num_queries(1):
        call_analytics(org=org, since=date(2025, 11, 7), until=date(2026, 12, 11), group_by="location")


def test_a_key_scoped_to_a_location_counts_only_that_locations_calls(org, world):
    location_id = next(c["location_id"] for c in world if c["location_id"])
    other_id = next(c["location_id"] for c in world if c["location_id"] not in (None, location_id))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(org, scope='read', location_ids=[location_id])[1]}")
    window = {"since": "2026-09-25", "until": "2026-11-07"}
    mine = [c for c in world if c["location_id"] == location_id]
    for group_by in ("day", "location", "outcome"):
        data = client.get("/v1/analytics/calls", {**window, "group_by": group_by}).json()["data"]
        assert data == _expected(mine, "America/Los_Angeles", date(2026, 9, 25), date(2026, 11, 7), group_by)
    # Naming another location through the scope finds nothing, as the calls list would.
    data = client.get("/v1/analytics/calls", {**window, "location_id": str(other_id)}).json()["data"]
    assert data["totals"]["calls"] == 0 and any(c["location_id"] == other_id for c in world)


def test_the_default_range_is_the_last_30_local_days(api, org):
    data = api.get("/v1/analytics/calls").json()["data"]
    today = datetime.now(UTC).date()  # the org's zone is UTC
    assert (data["since"], data["until"], data["group_by"]) == (
        (today - timedelta(days=29)).isoformat(), today.isoformat(), "day")
    assert [b["key"] for b in data["buckets"]] == [(today - timedelta(days=n)).isoformat() for n in range(29, -1, -1)]
    assert data["totals"] == {"calls": 0, "real_engagements": 0, "outcomes": {}, "escalations": 0,
                              "escalation_rate": None, "average_duration_seconds": None,
                              "average_quality_score": None, "bookings": 0, "orders": 0, "unanswered_questions": 0,
                              "fields": {}}


@pytest.mark.parametrize(("params", "errors"), [
    ({"group_by": "hour"}, {"group_by": ['"hour" is not a valid choice.']}),
    ({"since": "2026-02-01", "until": "2026-01-31"}, {"until": ["until must not be before since."]}),
    ({"since": "2025-01-01", "until": "2026-02-05"}, {"until": ["The range may span at most 400 days."]}),
    ({"since": "2026-13-01"}, {"since": ["Date has wrong format. Use one of these formats instead: YYYY-MM-DD."]}),
    ({"until": "2026-01-01T00:00:00Z"},
     {"until": ["Date has wrong format. Use one of these formats instead: YYYY-MM-DD."]}),
    ({"group_by": ""}, {"group_by": ["This parameter may not be empty."]}),
    ({"limit": "5"}, {"limit": ["Unknown query parameter."]}),
    ({"location_id": "nope"}, {"location_id": ["Must be a valid UUID."]}),
])
def test_bad_input_is_400_with_the_exact_body(api, params, errors):
    response = api.get("/v1/analytics/calls", params)
    assert (response.status_code, response.json()) == (400, validation(errors))


def test_400_days_is_the_longest_range(api):
    response = api.get("/v1/analytics/calls", {"since": "2025-01-01", "until": "2026-02-04", "group_by": "week"})
    assert response.status_code == 200
    assert len(response.json()["data"]["buckets"]) == 58
