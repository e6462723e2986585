"""The evaluation of every enabled alert rule (alerts.tasks.evaluate, every minute; docs/api.md#alerts).

Organizations are taken in batches; per batch, one aggregate query per kind of figure reads what the batch's rules
need from indexes that already exist, each an index range bounded by the longest window a rule of that
organization watches (never the organization's whole history):

- calls (count, abandoned, completed, with an unanswered question) per location and minute: `call_org_started_idx`;
- unhandled callback requests and escalations per location and minute: their `created_at` index;
- webhook attempts and failures per minute: `webhooks_attempt_sub_created` (index-only, status code included);
- for `line_silent`, the calls per location and minute of the same local weekday and hour of the last four weeks.

The rules are then judged in Python from those few rows (prefix sums per location, a bisection per rule), and only
the alerts that open or resolve are written, each in its own transaction with its event and e-mail.

`now` is a parameter, so a test sets the clock (no sleeps) and the bench replays any minute.
"""

import bisect
import functools
import logging
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.db import IntegrityError, connection, transaction
from django.db.models import Max
from django.utils import timezone

from core.links import alert_url
from knowledge.weekly_hours import DAYS
from notifications.services import notify_alert
from orgs.models import Location, Organization
from webhooks.services import emit

from .models import Alert, AlertRule, Channel, Comparator, Metric

logger = logging.getLogger("alerts")

BATCH_ORGS = 200
WEEKS_BACK = 4
ALL = "all"  # the key of an organization's figures over all its locations (and none)
CALL_METRICS = {Metric.CALLS, Metric.ABANDONED_CALLS, Metric.UNANSWERED_QUESTION_RATE, Metric.LINE_SILENT}

# (calls, abandoned, completed, completed with an unanswered question) per organization, location and minute.
_CALLS_SQL = """
    SELECT o.org, c.location_id, extract(epoch FROM date_trunc('minute', c.started_at))::bigint,
           GROUPING(c.location_id),
           count(*), count(*) FILTER (WHERE c.status = 'abandoned'), count(*) FILTER (WHERE c.status = 'completed'),
           count(*) FILTER (WHERE c.status = 'completed' AND jsonb_typeof(c.unanswered_questions) = 'array'
                                  AND jsonb_array_length(c.unanswered_questions) > 0)
      FROM unnest(%s::uuid[], %s::timestamptz[]) AS o(org, since)
     CROSS JOIN LATERAL (SELECT c.location_id, c.started_at, c.status, c.unanswered_questions FROM calls_call c
                          WHERE c.organization_id = o.org AND c.started_at >= o.since AND c.started_at < %s OFFSET 0) c
     GROUP BY GROUPING SETS ((1, 2, 3), (1, 3))
"""
# Unhandled follow-ups (callback requests, escalations) per organization, location (their call's) and minute.
# Follow-ups are few beside calls: one range of the `created_at` index over the batch's longest window, each row then
# kept if within its organization's own.
_WAITING_SQL = """
    SELECT o.org, c.location_id, extract(epoch FROM date_trunc('minute', r.created_at))::bigint,
           GROUPING(c.location_id), count(*)
      FROM {table} r
      JOIN unnest(%s::uuid[], %s::timestamptz[]) AS o(org, since)
        ON r.organization_id = o.org AND r.created_at >= o.since
      JOIN calls_call c ON c.id = r.call_id
     WHERE r.created_at >= %s AND r.created_at < %s AND r.handled_at IS NULL
     GROUP BY GROUPING SETS ((1, 2, 3), (1, 3))
"""
# Webhook attempts and failed ones per organization and minute (every subscription of the organization).
_ATTEMPTS_SQL = """
    SELECT o.org, NULL::uuid, extract(epoch FROM date_trunc('minute', a.created_at))::bigint, 1, count(*),
           count(*) FILTER (WHERE a.status_code IS NULL OR a.status_code NOT BETWEEN 200 AND 299)
      FROM unnest(%s::uuid[], %s::timestamptz[]) AS o(org, since)
      JOIN webhooks_subscription s ON s.organization_id = o.org
     CROSS JOIN LATERAL (SELECT a.created_at, a.status_code FROM webhooks_deliveryattempt a
                          WHERE a.subscription_id = s.id AND a.created_at >= o.since AND a.created_at < %s OFFSET 0) a
     GROUP BY 1, 3
"""
# Calls per organization, location and minute within given ranges (line_silent's past weeks).
_HISTORY_SQL = """
    SELECT o.org, c.location_id, extract(epoch FROM date_trunc('minute', c.started_at))::bigint, 0, count(*)
      FROM unnest(%s::uuid[], %s::timestamptz[], %s::timestamptz[]) AS o(org, since, until)
     CROSS JOIN LATERAL (SELECT c.location_id, c.started_at FROM calls_call c
                          WHERE c.organization_id = o.org AND c.started_at >= o.since AND c.started_at < o.until
                          OFFSET 0) c
     GROUP BY 1, 2, 3
"""
# Each reads, per organization, one index range: LATERAL with OFFSET 0 (which keeps the planner from flattening it
# into a hash join over the whole table).


class Series:
    """Figures per minute of one organization at one location (or ALL), summed from any minute on by bisection."""

    def __init__(self, width: int):
        self.rows: dict[int, list] = {}
        self.width = width
        self._minutes: list[int] | None = None
        self._cumulative: list[list] = []

    def set(self, minute: int, values) -> None:
        self.rows[minute] = values

    def since(self, start: int) -> list:
        """The sums of every minute from `start` (epoch seconds) on."""
        if self._minutes is None:
            self._minutes = sorted(self.rows)
            total = [0] * self.width
            self._cumulative = []
            for minute in reversed(self._minutes):  # suffix sums: figures from this minute on
                total = [a + b for a, b in zip(total, self.rows[minute], strict=True)]
                self._cumulative.append(total)
            self._cumulative.reverse()
        position = bisect.bisect_left(self._minutes, start)
        return self._cumulative[position] if position < len(self._minutes) else [0] * self.width


@dataclass
class Figures:
    """What one batch's queries found: per (org, location or ALL) series of each kind."""

    calls: dict = field(default_factory=dict)
    callbacks: dict = field(default_factory=dict)
    escalations: dict = field(default_factory=dict)
    attempts: dict = field(default_factory=dict)
    history: dict = field(default_factory=dict)
    open_history: dict = field(default_factory=dict)  # (org, location) -> OpenCalls, built on first use
    expected: dict = field(default_factory=dict)  # ((org, location), window) -> expected calls at this minute


@dataclass
class Place:
    """A location as the evaluation sees it: its zone and opening hours per weekday (minutes from midnight)."""

    id: uuid.UUID
    name: str
    zone: ZoneInfo
    hours: dict[str, list[tuple[int, int]]]

    def open_at(self, instant: datetime) -> bool:
        """Open at `instant` by its weekly hours in its own time zone; a location without hours is always open."""
        if not self.hours:
            return True
        local = instant.astimezone(self.zone)
        minute = local.hour * 60 + local.minute
        return any(start <= minute < end for start, end in self.hours.get(DAYS[local.weekday()], ()))


def _minutes(value: str) -> int:
    hours, minutes = value.split(":")
    return int(hours) * 60 + int(minutes)


def _place(location: Location) -> Place:
    try:
        zone = ZoneInfo(location.timezone)
    except (KeyError, ValueError):
        zone = ZoneInfo("UTC")
    hours: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for window in location.weekly_hours or []:
        hours[window["day"]].append((_minutes(window["start"]), _minutes(window["end"])))
    return Place(location.pk, location.name, zone, dict(hours))


def _fill(target: dict, rows, width: int) -> None:
    """Rows of (org, location, minute, whole, *values) into per-location series, or, `whole` (the query's grouping
    set over every location), the organization's (ALL)."""
    for org_id, location_id, minute, whole, *values in rows:
        key = (org_id, ALL if whole else location_id)
        series = target.get(key)
        if series is None:
            series = target[key] = Series(width)
        series.set(minute, values)


def _query(sql: str, params) -> list:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


@functools.lru_cache(maxsize=4096)
def _past_window(zone: ZoneInfo, now: datetime, window: int, weeks: int) -> tuple[int, int]:
    """The window that ended `weeks` weeks before `now` at the same local wall-clock time (so across a DST change it
    is the same hour of the day, not the same UTC instant), as epoch seconds. Cached: a minute's rules share a few
    zones and windows."""
    local_end = now.astimezone(zone).replace(tzinfo=None) - timedelta(weeks=weeks)
    local_start = local_end - timedelta(minutes=window)
    return int(local_start.replace(tzinfo=zone).timestamp()), int(local_end.replace(tzinfo=zone).timestamp())


class OpenCalls:
    """A location's past calls per minute, counting only the minutes it was open: cumulative sums for ranges."""

    def __init__(self, series: Series, place: Place):
        self.minutes = sorted(minute for minute in series.rows
                              if place.open_at(datetime.fromtimestamp(minute, tz=place.zone)))
        self.cumulative = [0]
        for minute in self.minutes:
            self.cumulative.append(self.cumulative[-1] + series.rows[minute][0])

    def between(self, first: int, last: int) -> int:
        return self.cumulative[bisect.bisect_left(self.minutes, last)] - \
            self.cumulative[bisect.bisect_left(self.minutes, first)]


def expected_calls(figures: Figures, org_id, place: Place, now: datetime, window: int) -> float:
    """The calls `place` had on average in the same window of the last four weeks, counting only the minutes it
    was open then."""
    key = (org_id, place.id)
    series = figures.history.get(key)
    if series is None:
        return 0.0
    cached = figures.expected.get((key, window))
    if cached is not None:
        return cached
    open_calls = figures.open_history.get(key)
    if open_calls is None:
        open_calls = figures.open_history[key] = OpenCalls(series, place)
    total = 0
    for weeks in range(1, WEEKS_BACK + 1):
        total += open_calls.between(*_past_window(place.zone, now, window, weeks))
    figures.expected[(key, window)] = total / WEEKS_BACK
    return total / WEEKS_BACK


@dataclass(frozen=True, slots=True)
class Rule:
    """What the evaluation needs of an AlertRule, read as plain values (model instances for 50,000 rules a minute
    cost more than judging them)."""

    pk: uuid.UUID
    organization_id: uuid.UUID
    name: str
    metric: str
    location_ids: list | None
    comparator: str
    threshold: float
    window_minutes: int
    min_calls: int
    cooldown_minutes: int
    channels: list
    only_during_open_hours: bool


RULE_FIELDS = ("pk", "organization_id", "name", "metric", "location_ids", "comparator", "threshold", "window_minutes",
               "min_calls", "cooldown_minutes", "channels", "only_during_open_hours")


@dataclass
class Judgement:
    """One (rule, location) at one minute: the metric's value, whether it breaches, and line_silent's figures."""

    value: float | None  # None: not judged (too few calls, closed)
    breach: bool = False
    threshold: float | None = None
    expected: float | None = None


def _judge(rule: Rule, figures: Figures, org_id, target, place: Place | None, now: datetime,
           start: int) -> Judgement:
    key = (org_id, ALL if target is None else target)  # None: the organization as a whole
    metric = rule.metric
    if metric == Metric.LINE_SILENT:
        expected = expected_calls(figures, org_id, place, now, rule.window_minutes)
        came = figures.calls[key].since(start)[0] if key in figures.calls else 0
        return Judgement(value=float(came), breach=expected >= rule.min_calls and came == 0,
                         threshold=round(expected, 2), expected=expected)
    if metric in (Metric.CALLS, Metric.ABANDONED_CALLS, Metric.UNANSWERED_QUESTION_RATE):
        calls, abandoned, completed, questions = figures.calls[key].since(start) if key in figures.calls \
            else (0, 0, 0, 0)
        if metric == Metric.CALLS:
            value = float(calls)
        elif metric == Metric.ABANDONED_CALLS:
            value = float(abandoned)
        else:
            if completed == 0 or completed < rule.min_calls:
                return Judgement(value=None)
            value = round(questions / completed, 4)
    elif metric in (Metric.CALLBACKS_WAITING, Metric.ESCALATIONS_WAITING):
        source = figures.callbacks if metric == Metric.CALLBACKS_WAITING else figures.escalations
        value = float(source[key].since(start)[0]) if key in source else 0.0
    else:  # webhook_failure_rate: the organization's
        attempts, failed = figures.attempts[key].since(start) if key in figures.attempts else (0, 0)
        if attempts == 0 or attempts < rule.min_calls:
            return Judgement(value=None)
        value = round(failed / attempts, 4)
    breach = value > rule.threshold if rule.comparator == Comparator.GT else value < rule.threshold
    return Judgement(value=value, breach=breach, threshold=rule.threshold)


def _targets(rule: Rule, places: dict) -> list:
    """The (location id or None, Place or None) pairs a rule is judged for: its locations, each of the
    organization's for an organization-wide line_silent, else the organization as a whole."""
    if rule.location_ids is not None:
        return [(pk, places[pk]) for pk in rule.location_ids if pk in places]
    if rule.metric == Metric.LINE_SILENT:
        return [(pk, place) for pk, place in places.items() if place is not None]
    return [(None, None)]


def _open_now(place: Place | None, org_places: dict, now: datetime) -> bool:
    """A location's hours; for the organization as a whole, any of its locations open (or none at all)."""
    if place is not None:
        return place.open_at(now)
    return not org_places or any(p.open_at(now) for p in org_places.values())


def evaluate(*, now: datetime | None = None, organization_ids=None) -> dict:
    """Judges every enabled rule (of `organization_ids`, else of every organization) at `now` (default: the
    current minute) and opens or resolves alerts. Returns counts: rules, judged, fired, resolved."""
    now = (now or timezone.now()).replace(second=0, microsecond=0)
    rules = AlertRule.objects.filter(enabled=True).order_by("organization_id", "created_at")
    if organization_ids is not None:
        rules = rules.filter(organization_id__in=list(organization_ids))
    by_org: dict = defaultdict(list)
    for values in rules.values_list(*RULE_FIELDS):
        rule = Rule(*values)
        by_org[rule.organization_id].append(rule)
    stats = {"rules": 0, "judged": 0, "fired": 0, "resolved": 0}
    org_ids = list(by_org)
    for first in range(0, len(org_ids), BATCH_ORGS):
        batch = {org_id: by_org[org_id] for org_id in org_ids[first:first + BATCH_ORGS]}
        _evaluate_batch(batch, now, stats)
    return stats


def _since_params(batch: dict, now: datetime, metrics: set) -> tuple[list, list]:
    """(org ids, since) for the organizations with rules of `metrics`, since their longest such window."""
    orgs, since = [], []
    for org_id, rules in batch.items():
        windows = [rule.window_minutes for rule in rules if rule.metric in metrics]
        if windows:
            orgs.append(org_id)
            since.append(now - timedelta(minutes=max(windows)))
    return orgs, since


def _read_figures(batch: dict, now: datetime, until: datetime) -> Figures:
    figures = Figures()
    orgs, since = _since_params(batch, now, CALL_METRICS)
    if orgs:
        _fill(figures.calls, _query(_CALLS_SQL, [orgs, since, until]), 4)
    for metric, table, target in ((Metric.CALLBACKS_WAITING, "calls_callbackrequest", figures.callbacks),
                                  (Metric.ESCALATIONS_WAITING, "calls_escalation", figures.escalations)):
        orgs, since = _since_params(batch, now, {metric})
        if orgs:
            _fill(target, _query(_WAITING_SQL.format(table=table), [orgs, since, min(since), until]), 1)
    orgs, since = _since_params(batch, now, {Metric.WEBHOOK_FAILURE_RATE})
    if orgs:
        _fill(figures.attempts, _query(_ATTEMPTS_SQL, [orgs, since, until]), 2)
    # line_silent's past weeks: per organization and week, a range wide enough for any of its zones' offsets (the
    # exact local window is cut per location in expected_calls).
    orgs, since = _since_params(batch, now, {Metric.LINE_SILENT})
    history_orgs, starts, ends = [], [], []
    margin = timedelta(hours=3)
    for org_id, start in zip(orgs, since, strict=True):
        for weeks in range(1, WEEKS_BACK + 1):
            history_orgs.append(org_id)
            starts.append(start - timedelta(weeks=weeks) - margin)
            ends.append(now - timedelta(weeks=weeks) + margin)
    if history_orgs:
        _fill(figures.history, _query(_HISTORY_SQL, [history_orgs, starts, ends]), 1)
    return figures


def _evaluate_batch(batch: dict, now: datetime, stats: dict) -> None:
    until = now + timedelta(minutes=1)  # the whole current minute (`now` is its start)
    places: dict = defaultdict(dict)
    for location in Location.objects.filter(organization_id__in=list(batch)).only(
            "id", "organization_id", "name", "timezone", "weekly_hours"):
        places[location.organization_id][location.pk] = _place(location)
    figures = _read_figures(batch, now, until)
    open_now: dict = {}  # a location's (or an organization's) open hours at `now`, judged once
    candidates: list = []  # (rule, location, place, judgement) breaching with no open alert: fire unless cooling down
    open_alerts = {(alert.rule_id, alert.location_id): alert
                   for alert in Alert.objects.filter(organization_id__in=list(batch), resolved_at__isnull=True)}
    for org_id, rules in batch.items():
        org_places = places.get(org_id, {})
        for rule in rules:
            stats["rules"] += 1
            start = int((now - timedelta(minutes=rule.window_minutes)).timestamp())
            for location_id, place in _targets(rule, org_places):
                alert = open_alerts.get((rule.pk, location_id))
                if rule.only_during_open_hours:
                    where = place.id if place is not None else org_id
                    is_open = open_now.get(where)
                    if is_open is None:
                        is_open = open_now[where] = _open_now(place, org_places, now)
                    if not is_open:
                        continue  # closed: neither fires nor counts towards a resolution
                judgement = _judge(rule, figures, org_id, location_id, place, now, start)
                if judgement.value is None:
                    continue
                stats["judged"] += 1
                if alert is None:
                    if judgement.breach:
                        candidates.append((rule, location_id, place, judgement))
                elif judgement.breach:
                    if alert.clear_since is not None:
                        Alert.objects.filter(pk=alert.pk).update(clear_since=None)
                elif alert.clear_since is None:
                    Alert.objects.filter(pk=alert.pk).update(clear_since=now)
                elif now - alert.clear_since >= timedelta(minutes=rule.window_minutes) and _resolve(
                        rule, alert, place, now):
                    stats["resolved"] += 1
    if not candidates:
        return
    # The cooldown: each candidate's latest alert, in one query for the batch.
    latest = {(rule_id, location_id): at for rule_id, location_id, at in
              Alert.objects.filter(rule_id__in={rule.pk for rule, *_ in candidates}).values("rule_id", "location_id")
              .annotate(at=Max("triggered_at")).values_list("rule_id", "location_id", "at")}
    for rule, location_id, place, judgement in candidates:
        last = latest.get((rule.pk, location_id))
        if last is not None and now - last < timedelta(minutes=rule.cooldown_minutes):
            continue
        if _fire(rule, location_id, place, judgement, now):
            stats["fired"] += 1


def alert_data(alert: Alert, rule: Rule | None) -> dict:
    """The `data` of `alert.triggered` and `alert.resolved`."""
    return {
        "alert_id": alert.pk, "rule_id": alert.rule_id, "rule_name": rule.name if rule else "",
        "location_id": alert.location_id, "metric": alert.metric,
        "comparator": rule.comparator if rule else Comparator.GT.value, "value": alert.value,
        "threshold": alert.threshold, "window_minutes": alert.window_minutes, "triggered_at": alert.triggered_at,
        "resolved_at": alert.resolved_at, "alert_url": alert_url(alert.pk),
    }


def _fire(rule: Rule, location_id, place: Place | None, judgement: Judgement, now: datetime) -> bool:
    """Opens an alert (the caller checked the cooldown), with its event(s) and e-mail. False when another
    evaluation opened it first: the unique constraint decides."""
    org = Organization.objects.get(pk=rule.organization_id) if Channel.WEBHOOK in rule.channels else None
    try:
        with transaction.atomic():
            alert = Alert.objects.create(
                organization_id=rule.organization_id, rule_id=rule.pk, location_id=location_id, metric=rule.metric,
                value=judgement.value, threshold=judgement.threshold, window_minutes=rule.window_minutes,
                triggered_at=now,
            )
            if Channel.WEBHOOK in rule.channels:
                emit(org=org, type="alert.triggered", data=alert_data(alert, rule), location_id=location_id)
                if rule.metric == Metric.LINE_SILENT:
                    emit(org=org, type="location.line_silent", location_id=location_id, data={
                        "alert_id": alert.pk, "rule_id": rule.pk, "location_id": location_id,
                        "expected_calls": round(judgement.expected, 2), "window_minutes": rule.window_minutes,
                        "silent_since": now - timedelta(minutes=rule.window_minutes),
                    })
            if Channel.EMAIL in rule.channels:
                notify_alert(alert=alert, rule_name=rule.name, location_name=place.name if place else None,
                             resolved=False)
    except IntegrityError:
        return False
    logger.info("alerts: rule %s fired at %s (value %s)", rule.pk, location_id, judgement.value)
    return True


def _resolve(rule: Rule, alert: Alert, place: Place | None, now: datetime) -> bool:
    with transaction.atomic():
        locked = Alert.objects.select_for_update().filter(pk=alert.pk, resolved_at__isnull=True).first()
        if locked is None:
            return False
        locked.resolved_at = now
        locked.save(update_fields=["resolved_at", "updated_at"])
        if Channel.WEBHOOK in rule.channels:
            emit(org=Organization.objects.get(pk=rule.organization_id), type="alert.resolved",
                 data=alert_data(locked, rule), location_id=locked.location_id)
        if Channel.EMAIL in rule.channels:
            notify_alert(alert=locked, rule_name=rule.name, location_name=place.name if place else None,
                         resolved=True)
    return True
