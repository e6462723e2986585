"""Call analytics (GET /v1/analytics/calls and the dashboard's Analytics page): figures per local day, week, location
or outcome, read from the calls rollup (CallRollup) in one SQL aggregate.

The rollup already holds each organization's figures per local day in its time zone, location and outcome, so a year
is a few thousand rows whatever the number of calls; weeks are grouped from the days (ISO weeks, Monday first). Its
figures are the folded rows plus the deltas the fold has not moved yet (calls 0019), both read by the same statement:
a fold commits its move whole, so the statement sees each delta once, in one table or the other.
"""

import uuid
from datetime import date, datetime, timedelta

from django.db import connection
from django.utils import timezone

from orgs.models import Organization
from orgs.tenancy import location_ids_of

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
# The views calls_callrollup and calls_callfieldrollup without their GROUP BY: the statement below sums per bucket
# anyway, and PostgreSQL pushes its conditions into both branches (each read by its (organization, day) index).
_KEY_COLUMNS = "organization_id, day, location_id, outcome"
_CALLS = "(SELECT {0} FROM calls_callrollupfolded UNION ALL SELECT {0} FROM calls_callrollupdelta)".format(  # noqa: S608
    ", ".join([_KEY_COLUMNS, *_SUMS]))
_FIELDS = "(SELECT {0} FROM calls_callfieldrollupfolded UNION ALL SELECT {0} FROM calls_callfieldrollupdelta)".format(  # noqa: S608
    f"{_KEY_COLUMNS}, name, value_sum, value_count")


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
    key = _KEYS[group_by]
    condition = " AND ".join(where)
    sums = ", ".join(f"sum(r.{name}) AS {name}" for name in _SUMS)
    totals = ", ".join(f"sum(c.{name})" for name in _SUMS)
    # One statement, one row per bucket: the calls' figures (the outcomes' counts as an object) and the number fields'
    # [sum, count] per name. Only constants are interpolated (a GROUPINGS key, column names); values are parameters.
    sql = f"""
        WITH c AS (SELECT {key} AS key, r.outcome, {sums} FROM {_CALLS} r
                    WHERE {condition} GROUP BY 1, 2),
             f AS (SELECT key, jsonb_object_agg(name, jsonb_build_array(value_sum, value_count)) AS fields
                     FROM (SELECT {key} AS key, r.name, sum(r.value_sum) AS value_sum, sum(r.value_count) AS value_count
                             FROM {_FIELDS} r WHERE {condition} GROUP BY 1, 2
                           HAVING sum(r.value_count) <> 0) named GROUP BY 1)
        SELECT coalesce(json_agg(json_build_array(m.key, m.sums, m.outcomes, f.fields)), '[]') FROM (
            SELECT c.key, json_build_array({totals}) AS sums,
                   jsonb_object_agg(c.outcome, c.calls) FILTER (WHERE c.outcome <> '' AND c.calls <> 0) AS outcomes
              FROM c GROUP BY c.key HAVING sum(c.calls) <> 0
        ) m LEFT JOIN f ON coalesce(f.key::text, '') = coalesce(m.key::text, '')"""  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(sql, params * 2)
        # One JSON value for all the buckets (psycopg decodes `json`): a single decode, not one per bucket.
        rows = cursor.fetchone()[0]

    parse_key = date.fromisoformat if group_by in ("day", "week") else lambda value: value
    grouped: dict = {}
    names = set()
    for key_value, sums, outcomes, fields in rows:
        fields = fields or {}
        names.update(fields)
        grouped[None if key_value is None else parse_key(key_value)] = {
            "sums": dict(zip(_SUMS, sums, strict=True)), "outcomes": outcomes or {}, "fields": fields}

    buckets = [
        {**_bucket_key(group_by, key_value, since, until), **_figures(bucket, names)}
        for key_value, bucket in _ordered(group_by, grouped, since, until)
    ]
    total = _empty()
    for bucket in grouped.values():
        for metric in _SUMS:
            total["sums"][metric] += bucket["sums"][metric]
        for outcome, count in bucket["outcomes"].items():
            total["outcomes"][outcome] = total["outcomes"].get(outcome, 0) + count
        for name, (value_sum, count) in bucket["fields"].items():
            field_total = total["fields"].setdefault(name, [0.0, 0])
            field_total[0] += value_sum
            field_total[1] += count
    return {
        "since": since.isoformat(), "until": until.isoformat(), "time_zone": org.time_zone, "group_by": group_by,
        "buckets": buckets, "totals": _figures(total, names),
    }


def _empty() -> dict:
    return {"sums": dict.fromkeys(_SUMS, 0), "outcomes": {}, "fields": {}}


def _ordered(group_by: str, grouped: dict, since: date, until: date):
    """(key, bucket) in the answer's order: every day or week of the range, else by most calls."""
    empty = _empty()
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
    return {"key": key}


def _figures(bucket: dict, names: set) -> dict:
    """A bucket's figures; `fields` has every number field seen in the range, so that each bucket names the same."""
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
        "fields": {name: _field(*bucket["fields"].get(name, (0.0, 0))) for name in sorted(names)},
    }


def _field(value_sum: float, count: int) -> dict:
    value_sum = round(float(value_sum), 6)  # float sums of added and removed values may leave a 1e-15
    return {"sum": int(value_sum) if value_sum.is_integer() else value_sum, "count": count,
            "average": _ratio(value_sum, count, 2)}


def _ratio(part: int, whole: int, digits: int) -> float | None:
    return round(part / whole, digits) if whole else None
