"""Call analytics (GET /v1/analytics/calls and the dashboard's Analytics page): figures per local day, week, location
or outcome, read from the calls rollup (CallRollup) in one SQL aggregate.

The rollup already holds each organization's figures per local day in its time zone, location and outcome, so a year
is a few thousand rows whatever the number of calls; weeks are grouped from the days (ISO weeks, Monday first).
"""

import uuid
from datetime import date, datetime, timedelta

from django.db import connection
from django.utils import timezone

from core.tenancy import location_ids_of
from orgs.models import Organization

GROUPINGS = ("day", "week", "location", "outcome")
MAX_DAYS = 400
DEFAULT_DAYS = 30

_KEYS = {
    "day": "r.day",
    "week": "date_trunc('week', r.day)::date",
    "location": "r.location_id",
    "outcome": "r.outcome",
}
_SUMS = ["calls", "real_engagements", "escalations", "duration_sum", "duration_count", "score_sum", "score_count",
         "bookings", "orders", "unanswered_questions"]


def local_today(org: Organization) -> date:
    return timezone.now().astimezone(org.zone).date()


def default_since(until: date) -> date:
    """The start of the DEFAULT_DAYS days that end with `until`."""
    return until - timedelta(days=DEFAULT_DAYS - 1)


def range_errors(since: date, until: date) -> dict[str, list[str]]:
    """Why `since`..`until` is not a range the analytics answer (fieldErrors), or {}."""
    if until < since:
        return {"until": ["until must not be before since."]}
    if (until - since).days + 1 > MAX_DAYS:
        return {"until": [f"The range may span at most {MAX_DAYS} days."]}
    return {}


def day_bounds(org: Organization, since: date, until: date):
    """The instants where local day `since` starts and the day after `until` starts: the calls list's since/until."""
    zone = org.zone
    start = datetime(since.year, since.month, since.day, tzinfo=zone)
    after = until + timedelta(days=1)
    return start, datetime(after.year, after.month, after.day, tzinfo=zone)


def call_analytics(*, org: Organization, since: date, until: date, group_by: str, location_ids=None) -> dict:
    """`{since, until, time_zone, group_by, buckets: [...], totals}` for the org's calls that started on local days
    `since`..`until` (checked by the caller with range_errors), grouped by `group_by` (one of GROUPINGS).
    `location_ids` (an iterable) limits the calls to those locations, and so does the org's location scope (as
    `Call.objects.for_org` would: a scoped view sees its locations' calls, not location-less ones). Day and week
    buckets cover the whole range, empty ones included; location and outcome buckets are those with calls. One
    query."""
    where = ["r.organization_id = %s", "r.day BETWEEN %s AND %s"]
    params: list = [org.pk, since, until]
    scope = location_ids_of(org)
    if scope is not None:
        location_ids = scope if location_ids is None else scope & {uuid.UUID(str(pk)) for pk in location_ids}
    if location_ids is not None:
        where.append("r.location_id = ANY(%s)")
        params.append(list(location_ids))
    sums = ", ".join(f"sum(r.{name})" for name in _SUMS)
    # Only constants are interpolated (a GROUPINGS key, the column names); the values are parameters.
    sql = (f"SELECT {_KEYS[group_by]} AS key, r.outcome, {sums} FROM calls_callrollup r"  # noqa: S608
           f" WHERE {' AND '.join(where)} GROUP BY 1, 2 HAVING sum(r.calls) <> 0")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()

    grouped: dict = {}
    for key, outcome, *values in rows:
        bucket = grouped.setdefault(key, {"sums": dict.fromkeys(_SUMS, 0), "outcomes": {}})
        for name, value in zip(_SUMS, values, strict=True):
            bucket["sums"][name] += int(value)
        if outcome:
            bucket["outcomes"][outcome] = bucket["outcomes"].get(outcome, 0) + int(values[0])

    buckets = [
        {**_bucket_key(group_by, key, since, until), **_figures(bucket)}
        for key, bucket in _ordered(group_by, grouped, since, until)
    ]
    total = {"sums": dict.fromkeys(_SUMS, 0), "outcomes": {}}
    for bucket in grouped.values():
        for name in _SUMS:
            total["sums"][name] += bucket["sums"][name]
        for outcome, count in bucket["outcomes"].items():
            total["outcomes"][outcome] = total["outcomes"].get(outcome, 0) + count
    return {
        "since": since.isoformat(), "until": until.isoformat(), "time_zone": org.time_zone, "group_by": group_by,
        "buckets": buckets, "totals": _figures(total),
    }


def _ordered(group_by: str, grouped: dict, since: date, until: date):
    """(key, bucket) in the answer's order: every day or week of the range, else by most calls."""
    empty = {"sums": dict.fromkeys(_SUMS, 0), "outcomes": {}}
    if group_by == "day":
        return [(day, grouped.get(day, empty)) for day in _days(since, until)]
    if group_by == "week":
        first = since - timedelta(days=since.weekday())
        weeks = [first + timedelta(weeks=n) for n in range((until - first).days // 7 + 1)]
        return [(week, grouped.get(week, empty)) for week in weeks]
    return sorted(grouped.items(), key=lambda item: (-item[1]["sums"]["calls"], str(item[0] or "")))


def _days(since: date, until: date):
    return [since + timedelta(days=n) for n in range((until - since).days + 1)]


def _bucket_key(group_by: str, key, since: date, until: date) -> dict:
    if group_by == "day":
        return {"key": key.isoformat(), "since": key.isoformat(), "until": key.isoformat()}
    if group_by == "week":  # a week cut by the range counts only its days inside it
        return {"key": key.isoformat(), "since": max(key, since).isoformat(),
                "until": min(key + timedelta(days=6), until).isoformat()}
    if group_by == "location":
        return {"key": str(key) if key is not None else None}
    return {"key": key}


def _figures(bucket: dict) -> dict:
    sums = bucket["sums"]
    return {
        "calls": sums["calls"],
        "real_engagements": sums["real_engagements"],
        "outcomes": dict(sorted(bucket["outcomes"].items())),
        "escalations": sums["escalations"],
        "escalation_rate": _ratio(sums["escalations"], sums["calls"], 4),
        "average_duration_seconds": _ratio(sums["duration_sum"], sums["duration_count"], 1),
        "average_quality_score": _ratio(sums["score_sum"], sums["score_count"], 1),
        "bookings": sums["bookings"],
        "orders": sums["orders"],
        "unanswered_questions": sums["unanswered_questions"],
    }


def _ratio(part: int, whole: int, digits: int) -> float | None:
    return round(part / whole, digits) if whole else None
