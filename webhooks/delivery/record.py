"""Recording what was sent (`record_batch`): each attempt logged, each delivery moved on (succeeded, retried at
`next_delay`, failed) under its claim's token, and its subscription's health: the last success, slow-downs (halved
in-flight limit, a 429's pause), the failure streak and its `failing`/`recovered` events, disables (410, days of
failures), exhaustion e-mails. Claims whose POST never started are given back (`_settle`).
"""

import random
import uuid
from datetime import timedelta

from django.db import connection, transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce, Greatest

from core import dbclock
from core.timefmt import iso_ms
from notifications.services import (
    notify_webhook_exhausted,
    notify_webhook_failing,
    notify_webhook_recovered,
)

from .. import (
    conf,
    services,  # the module, not its names: services imports this one (through tasks)
)
from ..models import Delivery, DeliveryAttempt, Subscription
from ..ssrf import masked_url
from ..transport import Outcome
from .claim import _claim_params, _claim_sql, _execute_claiming, _fetch_claim, _release


def next_delay(attempt_number: int, retry_after: float | None = None) -> float:
    """Seconds to wait after failed attempt `attempt_number` (1-based): the schedule plus up to 10% jitter,
    and at least Retry-After when the receiver sent one with 429/502/503/504."""
    schedule = conf.OUTBOX.retry_schedule()
    base = schedule[min(attempt_number, len(schedule)) - 1]
    delay = base * (1 + random.uniform(0, conf.JITTER))
    return max(delay, retry_after or 0)


def _settle(finished, results, *, refill: int = 0, run=None):
    """Records what was sent (one transaction, each delivery under its own claim's token) and gives back what never
    started. With `refill` > 0 and every POST a success (a healthy drain, nearly always), the fair claim of `refill`
    more rides in the record's round trip (under `run`'s (token, ahead) when given): returns its (token, rows,
    contended); else None (the caller claims)."""
    sent = [(delivery, outcome) for delivery, outcome in finished if outcome is not None]
    if refill and sent and len(sent) == len(finished) and all(outcome.ok for _, outcome in sent):
        recorded, claimed = _record(None, sent, refill=refill, run=run)
        results.update({str(pk): r for pk, r in recorded.items()})
        return claimed
    if sent:
        results.update({str(pk): r for pk, r in record_batch(None, sent).items()})
    unsent: dict = {}
    for delivery, outcome in finished:
        if outcome is None:
            unsent.setdefault(delivery.token, []).append(delivery.pk)
    for token, pks in unsent.items():
        _release(token, pks)
        results.update({str(pk): "skipped" for pk in pks})
    return None


def _token_of(delivery, token):
    """The claim token a result is recorded under: the delivery's own claim's (a task's claims each have one), else
    the one given."""
    return getattr(delivery, "token", None) or token


def record_batch(token: uuid.UUID | None, outcomes: list[tuple[Delivery, Outcome]]) -> dict:
    """Logs each attempt and moves each delivery on, all in one transaction (`_record`). When every attempt
    succeeded that is one multi-statement query, its own implicit transaction (as the claim's); the health
    bookkeeping after it may then commit apart, which loses nothing but a timestamp's freshness. A failure's
    updates (a retry's due time, a disable) commit with the log, inside an explicit transaction."""
    if all(outcome.ok for _, outcome in outcomes):
        return _record(token, outcomes)
    with transaction.atomic():
        return _record(token, outcomes)


def _record(token: uuid.UUID, outcomes: list[tuple[Delivery, Outcome]], *, refill: int = 0, run=None):
    """Logs each attempt and moves each delivery on. Each `delivery` is the row as read right after the claim
    (its attempt_count is this attempt's number, its subscription the state at send time).
    Returns {delivery pk: "succeeded" | "retry" | "failed" | "stale"}.

    Every attempt is logged. Each delivery's update is conditional on the claim token: when the lease ran out and
    another worker claimed the delivery meanwhile, only the attempt is logged ("stale") and the other worker's
    claim stands. The log and all successes are one round trip (`_log_and_record_successes`); failures (rare) are
    one UPDATE each, as each has its own next due time. With `refill` (all successes, outside a transaction): the
    fair claim of `refill` deliveries in the same round trip, after the log: (results, (token, rows, contended)).
    Times are PostgreSQL's (core/dbclock.py): a retry's due time is a shared decision.
    """
    now = dbclock.now()
    # A batch of successes only, outside a transaction (nearly every batch of a drain): the health write rides in the
    # same round trip as the record, for the subscriptions it would write (`_healthy`). A 2xx shows the endpoint
    # healthy even when the lease had run out ("stale"), so which deliveries are still ours does not matter to it.
    healthy = _healthy(outcomes, now) if not connection.in_atomic_block and all(o.ok for _, o in outcomes) else []
    mine, claimed = _log_and_record_successes(token, outcomes, now, refill=refill, healthy=healthy, run=run)
    results = {delivery.pk: "succeeded" if delivery.pk in mine else "stale" for delivery, o in outcomes if o.ok}
    common = _attempt_done(now)
    failed = []
    for delivery, outcome in outcomes:
        if outcome.ok:
            continue
        number = delivery.attempt_count
        changes = {**common, "last_status_code": outcome.status_code, "last_error": outcome.error}
        exhausted = False
        if outcome.status_code == 410:
            changes.update(status=Delivery.Status.FAILED, next_attempt_at=None)
            result = "failed"
        elif number >= conf.OUTBOX.max_attempts():
            changes.update(status=Delivery.Status.FAILED, next_attempt_at=None)
            result = "failed"
            exhausted = True
        else:
            changes["next_attempt_at"] = now + timedelta(seconds=next_delay(number, outcome.retry_after))
            result = "retry"
        if not Delivery.objects.filter(pk=delivery.pk, claim_token=_token_of(delivery, token)).update(**changes):
            result = "stale"
        else:
            mine.add(delivery.pk)
            failed.append((delivery, outcome, exhausted))
        results[delivery.pk] = result
    _update_health(outcomes, mine, failed, now, written=healthy)
    _announce_recoveries(outcomes, mine, now)
    return (results, claimed) if refill else results


def _attempt_done(now) -> dict:
    """What every recorded attempt sets on its delivery, whatever the outcome: the claim released, the next try
    (if any) a scheduled one."""
    return {
        "claimed_until": None,
        "claim_token": None,
        "enqueued_at": None,
        "next_trigger": DeliveryAttempt.Trigger.SCHEDULED,
        "updated_at": now,
        "last_attempt_at": now,
    }


# A batch's attempts go in as columns (one array parameter each: a fraction of what model instances cost to
# build), and its successes are moved on in the same round trip; the fields set match `_attempt_done`.
_LOG_AND_SUCCEED_SQL = """
    SET LOCAL synchronous_commit TO OFF;
    INSERT INTO webhooks_deliveryattempt
           (id, created_at, updated_at, organization_id, delivery_id, subscription_id, number, trigger, status_code,
            duration_ms, response_body, error)
    SELECT gen_random_uuid(), %(now)s, %(now)s, a.organization_id, a.delivery_id, a.subscription_id, a.number,
           a.trigger, a.status_code, a.duration_ms, a.response_body, a.error
      FROM unnest(%(organization_id)s::uuid[], %(delivery_id)s::uuid[], %(subscription_id)s::uuid[],
                  %(number)s::int[], %(trigger)s::text[], %(status_code)s::int[], %(duration_ms)s::int[],
                  %(response_body)s::text[], %(error)s::text[])
           AS a(organization_id, delivery_id, subscription_id, number, trigger, status_code, duration_ms,
                response_body, error);
    UPDATE webhooks_delivery AS d
       SET status = 'succeeded', succeeded_at = %(now)s, next_attempt_at = NULL, last_status_code = ok.status_code,
           last_error = '', claimed_until = NULL, claim_token = NULL, enqueued_at = NULL, next_trigger = 'scheduled',
           updated_at = %(now)s, last_attempt_at = %(now)s
      FROM unnest(%(ok_ids)s::uuid[], %(ok_codes)s::int[], %(ok_tokens)s::uuid[]) AS ok(id, status_code, token)
     WHERE d.id = ok.id AND d.claim_token = ok.token
    RETURNING d.id
"""


def _log_and_record_successes(token, outcomes, now, *, refill: int = 0, healthy=(), run=None):
    """Logs every attempt and marks the successful deliveries still held by their claim (`_token_of`) succeeded;
    returns their ids and, with `refill`, the (token, rows) of a fair claim made after them in the same query (the
    claim then sees the slots they freed), else None. With `healthy` (subscription ids), their health write
    (`_MARK_HEALTHY_SQL`) goes in the same query, before the claim."""
    ok = [(d.pk, outcome.status_code, _token_of(d, token)) for d, outcome in outcomes if outcome.ok]
    params = {
        "now": now,
        "token": token,
        "organization_id": [d.organization_id for d, _ in outcomes],
        "delivery_id": [d.pk for d, _ in outcomes],
        "subscription_id": [d.subscription_id for d, _ in outcomes],
        "number": [d.attempt_count for d, _ in outcomes],
        "trigger": [d.next_trigger for d, _ in outcomes],
        "status_code": [o.status_code for _, o in outcomes],
        "duration_ms": [o.duration_ms for _, o in outcomes],
        "response_body": [o.body for _, o in outcomes],
        "error": [o.error for _, o in outcomes],
        "ok_ids": [pk for pk, _, _ in ok],
        "ok_codes": [code for _, code, _ in ok],
        "ok_tokens": [t for _, _, t in ok],
    }
    sql, claim_token = _LOG_AND_SUCCEED_SQL, None
    if healthy:
        params["healthy"] = list(healthy)
        sql += ";" + _MARK_HEALTHY_SQL.replace("%(ids)s", "%(healthy)s")
    if refill:
        claim_token, claim_params = _claim_params([], refill, token=run[0] if run else None,
                                                  ahead=run[1] if run else 1)
        params.update({f"claim_{name}": value for name, value in claim_params.items()})
        sql += ";" + _claim_sql(fair=True).replace("%(", "%(claim_")
    with connection.cursor() as cursor:
        if refill:
            _execute_claiming(cursor, sql, params)
        else:
            cursor.execute(sql, params)
        while cursor.description is None and cursor.nextset():  # past the SET's and the INSERT's results
            pass
        mine = {row[0] for row in cursor.fetchall()}  # then the health write's result, which _fetch_claim skips
        if not refill:
            return mine, None
        cursor.nextset()
        return mine, (claim_token, *_fetch_claim(cursor))


def _healthy(outcomes, now) -> list:
    """The subscriptions of an all-success batch whose health row needs writing: failing, slowed down, or last
    written over a second ago (so a busy endpoint's row is not a hot spot)."""
    subscriptions = {delivery.subscription_id: delivery.subscription for delivery, _ in outcomes}
    return sorted(
        (sub_id for sub_id, sub in subscriptions.items() if _needs_health_write(sub, now)), key=str
    )


def _needs_health_write(subscription, now) -> bool:
    stale = subscription.last_success_at is None or subscription.last_success_at < now - timedelta(seconds=1)
    return subscription.failing_since is not None or stale or _is_slowed(subscription)


def _update_health(outcomes, mine, failed, now, *, written=()) -> None:
    """Subscription health once per subscription per batch: the last success, the start of a failure streak,
    410 and too-long-failing disables, exhaustion e-mails.

    Subscriptions are written in id order: a batch with failures writes several in one transaction, and two workers
    writing the same two in opposite orders would deadlock: one of them would fail, and its deliveries would be sent
    again once their leases ran out."""
    by_sub: dict = {}
    for delivery, outcome in sorted(outcomes, key=lambda pair: str(pair[0].subscription_id)):
        if delivery.pk in mine:
            by_sub.setdefault(delivery.subscription_id, (delivery.subscription, []))[1].append(outcome)
    healthy = []
    for sub_id, (subscription, sub_outcomes) in by_sub.items():
        oks = [o.ok for o in sub_outcomes]
        slow = [(reason, o) for o in sub_outcomes if (reason := slow_reason(o))]
        if slow:
            _slow_down(sub_id, slow, now)
        if all(oks):
            # Health is written at most once a second per subscription, so a busy endpoint's row is not a hot spot;
            # a slowed-down one gets its full share back with its first 2xx.
            if sub_id not in written and _needs_health_write(subscription, now):
                healthy.append(sub_id)
        elif any(oks):
            # Sent concurrently, so there is no "last" outcome: the endpoint answered, and a new streak starts now.
            changes = {} if slow else _FULL_SHARE
            Subscription.objects.filter(pk=sub_id).update(last_success_at=now, failing_since=now,
                                                          consecutive_failures=0, **changes)
        else:
            Subscription.objects.filter(pk=sub_id, failing_since__isnull=True).update(failing_since=now)
            _count_failures(subscription, len(sub_outcomes), sub_outcomes[-1], now)
    if healthy:
        _mark_healthy(healthy, now)
    failing_subs = []
    for delivery, outcome, exhausted in sorted(failed, key=lambda failure: str(failure[0].subscription_id)):
        sub_id = delivery.subscription_id
        if outcome.status_code == 410:
            services.subscription_disable(subscription_id=sub_id, reason="The endpoint answered 410 Gone.", now=now)
        elif exhausted and delivery.next_trigger == DeliveryAttempt.Trigger.SCHEDULED:
            delivery.last_error = outcome.error
            _notify_exhausted(delivery)
        if sub_id not in failing_subs:
            failing_subs.append(sub_id)
    for sub_id in failing_subs:
        _disable_if_failing_too_long(sub_id, now)


# The all-success batches' health write (last success, full share back): every subscription of the batch in one
# statement. Outside a transaction (record_batch's all-success path) it is its own implicit transaction that skips
# the WAL flush wait, as the claim and the record do: sampled during a drain, these UPDATEs sat in WALSync about a
# sixth as long as the claims ran. A crash can lose only this write (a timestamp, or a slow-down already lifted being
# lifted again by the next 2xx). Inside a transaction (a batch with failures) it commits with the rest, durably.
# A row another worker holds (its claim, or its own health write) is skipped, not waited for: two of these UPDATEs
# locking their rows in different orders deadlocked in a four-process drain, and the write is refreshed by the
# subscription's next successful batch anyway (the slow-down lifted a batch later at worst).
_MARK_HEALTHY_SQL = """
    UPDATE webhooks_subscription AS s
       SET last_success_at = %(now)s, failing_since = NULL, in_flight_limit = NULL, slowed_reason = '',
           slowed_at = NULL, paused_until = NULL, consecutive_failures = 0
      FROM (SELECT id FROM webhooks_subscription WHERE id = ANY(%(ids)s::uuid[]) FOR UPDATE SKIP LOCKED) AS free
     WHERE s.id = free.id
"""


def _mark_healthy(sub_ids, now) -> None:
    sql = _MARK_HEALTHY_SQL
    if not connection.in_atomic_block:
        sql = "SET LOCAL synchronous_commit TO OFF;" + sql
    with connection.cursor() as cursor:
        cursor.execute(sql, {"now": now, "ids": list(sub_ids)})


# Fair delivery's slow-down (docs/webhooks.md#fair-delivery), AIMD-like: each batch of results with a timeout, a
# refused connection or a 429 halves the endpoint's in-flight limit (down to 1), so a hanging endpoint ends up holding
# one sender thread in the whole pool; a 429's Retry-After also pauses its claims (at most MAX_PAUSE_SECONDS). Its
# retries back off on the schedule, as every failure's. The first 2xx restores the full share at once.
_FULL_SHARE = {"in_flight_limit": None, "slowed_reason": "", "slowed_at": None, "paused_until": None}
MAX_PAUSE_SECONDS = 600


def slow_reason(outcome: Outcome) -> str:
    """Why this outcome slows its endpoint down ("" when it does not)."""
    if outcome.status_code == 429:
        return "The endpoint answered 429 Too Many Requests."
    if outcome.status_code is None and outcome.error.startswith("Timeout"):
        return f"The endpoint timed out ({outcome.error.removeprefix('Timeout: ')})."
    if outcome.status_code is None and outcome.error.startswith("ConnectionError"):
        return "The endpoint refused or dropped the connection."
    return ""


def _is_slowed(subscription: Subscription) -> bool:
    return subscription.in_flight_limit is not None or subscription.paused_until is not None


def _slow_down(sub_id, slow: list, now) -> None:
    """Halves the endpoint's in-flight limit (at least 1) and records why; a 429's Retry-After pauses it too."""
    reason, _ = slow[-1]
    pauses = [o.retry_after for _, o in slow if o.status_code == 429 and o.retry_after]
    changes = {
        "in_flight_limit": Greatest(Value(1), Coalesce(F("in_flight_limit"), Value(conf.max_in_flight())) / 2),
        "slowed_reason": reason,
        "slowed_at": now,
    }
    if pauses:
        changes["paused_until"] = now + timedelta(seconds=min(max(pauses), MAX_PAUSE_SECONDS))
    Subscription.objects.filter(pk=sub_id).update(**changes)


# Operational events (docs/webhooks.md#operational-events): the organization's other subscriptions that choose them
# and its "webhook problems" recipients hear that an endpoint is failing (its FAILING_AFTER-th consecutive failed
# attempt), was disabled, or recovered (its first 2xx after `failing` was sent). Never the endpoint itself: it is
# failing, and an event about its own trouble would only add to its queue. The endpoint's URL is masked there
# (ssrf.masked_url): its path or query may hold a token, and the receivers may be another team's systems.
FAILING_AFTER = 4
_COUNT_FAILURES_SQL = """
    UPDATE webhooks_subscription
       SET consecutive_failures = consecutive_failures + %(failed)s,
           failing_announced_at = CASE
               WHEN failing_announced_at IS NULL AND consecutive_failures + %(failed)s >= %(after)s THEN %(now)s
               ELSE failing_announced_at END
     WHERE id = %(id)s
    RETURNING consecutive_failures, failing_announced_at = %(now)s, failing_since
"""


def _count_failures(subscription: Subscription, failed: int, last: Outcome, now) -> None:
    """Adds a batch's failed attempts to the endpoint's streak; at the FAILING_AFTER-th, once per streak, sends
    `webhook_subscription.failing`. Runs in the record's transaction."""
    with connection.cursor() as cursor:
        cursor.execute(_COUNT_FAILURES_SQL, {"failed": failed, "after": FAILING_AFTER, "now": now,
                                             "id": subscription.pk})
        row = cursor.fetchone()
    if row is None or not row[1]:
        return
    count, _, failing_since = row
    data = {"subscription_id": str(subscription.pk), "url": masked_url(subscription.url), "consecutive_failures": count,
            "failing_since": failing_since, "last_status_code": last.status_code, "last_error": last.error[:500]}
    services.operational_event_emit(subscription=subscription, type="webhook_subscription.failing", data=data)
    notify_webhook_failing(subscription=subscription, consecutive_failures=count, now=now)


def _announce_recoveries(outcomes, mine, now) -> None:
    """`webhook_subscription.recovered` for each endpoint of the batch that answered 2xx while `failing` had been
    sent for it (as the claim read it); the conditional UPDATE sends it once, whichever worker records first."""
    done = set()
    for delivery, outcome in outcomes:
        subscription = delivery.subscription
        if not outcome.ok or delivery.pk not in mine or subscription.failing_announced_at is None \
                or subscription.pk in done:
            continue
        done.add(subscription.pk)
        with transaction.atomic():
            if not Subscription.objects.filter(pk=subscription.pk, failing_announced_at__isnull=False).update(
                    failing_announced_at=None, consecutive_failures=0):
                continue
            data = {"subscription_id": str(subscription.pk), "url": masked_url(subscription.url),
                    "failing_since": subscription.failing_since, "recovered_at": iso_ms(now)}
            services.operational_event_emit(subscription=subscription, type="webhook_subscription.recovered",
                                            data=data)
            notify_webhook_recovered(subscription=subscription, now=now)


def _disable_if_failing_too_long(subscription_id, now) -> None:
    cutoff = now - timedelta(seconds=conf.disable_after_seconds())
    if Subscription.objects.filter(pk=subscription_id, enabled=True, failing_since__lte=cutoff).exists():
        days = conf.disable_after_seconds() / 86400
        services.subscription_disable(subscription_id=subscription_id,
                                      reason=f"Every delivery failed for {days:g} days straight.", now=now)


def _notify_exhausted(delivery: Delivery) -> None:
    subscription = Subscription.objects.only("url", "organization_id").get(pk=delivery.subscription_id)
    notify_webhook_exhausted(delivery=delivery, subscription=subscription)
