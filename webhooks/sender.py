"""Sending deliveries: claim, POST, record, schedule the next try (`send_batch`, the `deliver_batch` task's body);
and which deliveries are due (`due_deliveries`, what the sweep publishes).

Exactly-once per attempt: a worker claims deliveries (a batch at a time) with one conditional UPDATE (due,
pending, no live lease) that sets a lease and a token. A duplicate task run finds the lease and does nothing.
Only the token holder records the result. A worker killed mid-send leaves the lease to expire; the sweeper then
enqueues the delivery again (at least once, never lost). Receivers dedupe on `webhook-id`.
"""

import logging
import os
import random
import threading
import time
import uuid
from concurrent.futures import ALL_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import timedelta

from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from notifications.services import notify_webhook_disabled, notify_webhook_exhausted

from . import conf, crypto
from .models import Delivery, DeliveryAttempt, Subscription
from .transport import USER_AGENT, Outcome, post

logger = logging.getLogger("webhooks")


def build_headers(*, event_id: str, body: bytes, secrets_: list[str], timestamp: int | None = None) -> dict[str, str]:
    """The Standard Webhooks headers of one attempt (timestamp = now unless given)."""
    timestamp = int(time.time()) if timestamp is None else timestamp
    return {
        "webhook-id": event_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": crypto.signature_header(secrets_, event_id, timestamp, body),
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
    }


def next_delay(attempt_number: int, retry_after: float | None = None) -> float:
    """Seconds to wait after failed attempt `attempt_number` (1-based): the schedule plus up to 10% jitter,
    and at least Retry-After when the receiver sent one with 429/502/503/504."""
    schedule = conf.OUTBOX.retry_schedule()
    base = schedule[min(attempt_number, len(schedule)) - 1]
    delay = base * (1 + random.uniform(0, conf.JITTER))
    return max(delay, retry_after or 0)


# Bookkeeping commits (claims and results) skip the WAL flush wait: `SET LOCAL synchronous_commit TO OFF`, for
# that transaction only. Why it is safe: the outbox rows themselves were committed durably by emit(). A database
# crash can lose at most the last fraction of a second of claims and results; those deliveries are then simply
# sent again, which at-least-once delivery already allows. Locking and visibility are unchanged, so no attempt is
# sent twice by two workers. It saves one disk flush per claim and per result (most of a delivery's cost).
#
# One round trip: the async-commit setting, the claim and what sending needs, sent as one query outside any
# transaction block. PostgreSQL runs such a multi-statement query as one implicit transaction, where SET LOCAL holds
# (docs: protocol-flow, "Multiple Statements in a Simple Query"); an explicit BEGIN and COMMIT are two more round
# trips (an empty claim took 0.63 ms with them, 0.43 ms without; a drain runs many: see tasks.deliver_batch).
# The candidates are picked and row-locked in a CTE (the ids asked for, plus up to `extra` of the oldest other
# due ones), each by its own index, then updated by primary key.
_CLAIM_SQL = """
    SET LOCAL synchronous_commit TO OFF;
    WITH asked AS (
        SELECT id FROM webhooks_delivery
         WHERE id = ANY(%(ids)s::uuid[])
           AND status = 'pending' AND next_attempt_at <= %(now)s
           AND (claimed_until IS NULL OR claimed_until < %(now)s)
           FOR UPDATE SKIP LOCKED
    ), waiting AS (
        SELECT id FROM webhooks_delivery
         WHERE status = 'pending' AND next_attempt_at <= %(now)s
           AND (claimed_until IS NULL OR claimed_until < %(now)s)
         ORDER BY next_attempt_at
         LIMIT %(extra)s
           FOR UPDATE SKIP LOCKED
    ), picked AS (
        SELECT id FROM asked UNION SELECT id FROM waiting
    )
    UPDATE webhooks_delivery AS d
       SET claimed_until = %(until)s, claim_token = %(token)s, attempt_count = d.attempt_count + 1
      FROM picked, webhooks_event AS e
     WHERE d.id = picked.id AND e.id = d.event_id
    RETURNING d.id, d.organization_id, d.attempt_count, d.next_trigger, d.subscription_id, d.event_id, e.payload
"""


def claim(delivery_ids, *, extra: int = 0) -> tuple[uuid.UUID, list[tuple]]:
    """Claims, for one attempt each, those of `delivery_ids` that are due, pending and unleased, plus up to `extra`
    other such deliveries (the oldest due first: work already waiting on the broker behind this task). Returns the
    claim token and, for each delivery claimed, the RETURNING list of _CLAIM_SQL: (id, organization_id,
    attempt_count, next_trigger, subscription_id, event_id, payload).

    One conditional UPDATE. The candidate rows are row-locked with SKIP LOCKED and re-checked after the lock, so
    two workers never claim the same attempt: a concurrent claimer either skips the row or sees the lease. A
    claimed id whose own task runs later finds the lease and does nothing ("skipped").
    """
    now = timezone.now()
    token = uuid.uuid4()
    until = now + timedelta(seconds=conf.lease_seconds())
    ids = [uuid.UUID(str(pk)) for pk in delivery_ids]
    with connection.cursor() as cursor:
        params = {"until": until, "token": token, "ids": ids, "now": now, "extra": max(0, int(extra))}
        cursor.execute(_CLAIM_SQL, params)
        while cursor.description is None and cursor.nextset():  # past the SET's result
            pass
        return token, cursor.fetchall()


_pool_lock = threading.Lock()
_pool: dict = {}


def _executor() -> ThreadPoolExecutor:
    """This process's sender threads (created lazily, so after the prefork fork). They share the process's
    connection pools (`transport`), so a batch reuses open keep-alive connections to its receivers."""
    pid = os.getpid()
    with _pool_lock:
        executor = _pool.get(pid)
        if executor is None:
            _pool.clear()
            executor = _pool[pid] = ThreadPoolExecutor(conf.send_threads(), thread_name_prefix="webhook-send")
    return executor


@dataclass(slots=True)
class Claimed:
    """A delivery as claimed for one attempt: what sending and recording it need (`record_batch` also takes
    Delivery rows, which have the same attributes). `attempt_count` is this attempt's number."""

    pk: uuid.UUID
    organization_id: uuid.UUID
    attempt_count: int
    next_trigger: str
    subscription_id: uuid.UUID
    event_id: str
    payload: bytes
    subscription: Subscription
    last_error: str = ""


def _with_subscriptions(rows) -> list[Claimed]:
    """Claimed deliveries from `claim`'s plain values (full model rows with their event and subscription joined in
    cost a worker more than the POST itself), with their subscriptions (one query; a batch rarely has many)."""
    subscriptions = Subscription.objects.in_bulk({row[4] for row in rows})
    return [Claimed(*row[:6], bytes(row[6]), subscriptions[row[4]]) for row in rows]


def send_batch(delivery_ids, *, extra: int = 0) -> dict[str, str]:
    """One attempt for each delivery of the batch that is due and unclaimed (plus up to `extra` other due ones):
    claim all and read their events in one UPDATE, their subscriptions in one query, POST concurrently, record all
    results in one transaction. A duplicate run of the same batch claims nothing and sends nothing.

    Returns {delivery id: what happened} for the ids given and for any extra ones claimed: "skipped" (not due, or
    claimed by another worker), "succeeded", "retry", "failed", "disabled" (its subscription is off), "stale" (the
    lease ran out before the result came)."""
    results = {str(pk): "skipped" for pk in delivery_ids}
    claimed_at = time.monotonic()
    token, rows = claim(delivery_ids, extra=extra)
    if not rows:
        return results
    deliveries = _with_subscriptions(rows)
    now = timezone.now()
    disabled = [d for d in deliveries if not d.subscription.enabled]
    if disabled:
        Delivery.objects.filter(pk__in=[d.pk for d in disabled], claim_token=token).update(
            status=Delivery.Status.FAILED,
            attempt_count=F("attempt_count") - 1,
            last_error="Subscription disabled; not sent",
            claimed_until=None,
            claim_token=None,
            next_attempt_at=None,
        )
        results.update({str(d.pk): "disabled" for d in disabled})
    to_send = [d for d in deliveries if d.subscription.enabled]
    secrets_by_sub = {}  # Fernet decryption once per subscription per batch
    jobs = []
    for delivery in to_send:
        sub = delivery.subscription
        if sub.pk not in secrets_by_sub:
            secrets_by_sub[sub.pk] = sub.signing_secrets(now)
        headers = build_headers(event_id=delivery.event_id, body=delivery.payload, secrets_=secrets_by_sub[sub.pk])
        jobs.append((delivery, headers))
    if len(jobs) == 1:
        delivery, headers = jobs[0]
        outcome = post(delivery.subscription.url, delivery.payload, headers)
        results.update({str(pk): r for pk, r in record_batch(token, [(delivery, outcome)]).items()})
        return results
    start_by = claimed_at + _start_window()
    pending = {
        _executor().submit(_send_before, start_by, delivery.subscription.url, delivery.payload, headers): delivery
        for delivery, headers in jobs
    }
    while pending:
        # Results are recorded as they come (every RECORD_EVERY s), so one slow receiver does not hold the others'.
        done, _ = wait(pending, timeout=RECORD_EVERY, return_when=ALL_COMPLETED)
        finished = [(pending.pop(future), future.result()) for future in done]  # _send_before never raises
        sent = [(delivery, outcome) for delivery, outcome in finished if outcome is not None]
        unsent = [delivery.pk for delivery, outcome in finished if outcome is None]
        if sent:
            results.update({str(pk): r for pk, r in record_batch(token, sent).items()})
        if unsent:
            _release(token, unsent)
            results.update({str(pk): "skipped" for pk in unsent})
    return results


RECORD_EVERY = 1.0


def _start_window() -> float:
    """How long after the claim a batch's POST may still start, so that it ends (TOTAL_TIMEOUT at most) well
    inside the lease and no other worker can claim and send the same attempt meanwhile. (Test settings use
    leases shorter than the request budget; half the lease then.)"""
    lease = conf.lease_seconds()
    return max(lease - conf.TOTAL_TIMEOUT - 5.0, lease / 2)


def _send_before(start_by: float, url: str, body: bytes, headers: dict[str, str]) -> Outcome | None:
    """post(), unless the batch has waited past `start_by` for a free thread: then None, nothing sent."""
    if time.monotonic() > start_by:
        return None
    return post(url, body, headers)


def _release(token: uuid.UUID, delivery_ids) -> None:
    """Gives back claims whose POST never started: no attempt made, none counted, still due (the sweeper or
    another batch takes them)."""
    Delivery.objects.filter(pk__in=delivery_ids, claim_token=token).update(
        claimed_until=None, claim_token=None, attempt_count=F("attempt_count") - 1
    )


def record_batch(token: uuid.UUID, outcomes: list[tuple[Delivery, Outcome]]) -> dict:
    """Logs each attempt and moves each delivery on, all in one transaction (`_record`). When every attempt
    succeeded that is one multi-statement query, its own implicit transaction (as the claim's); the health
    bookkeeping after it may then commit apart, which loses nothing but a timestamp's freshness. A failure's
    updates (a retry's due time, a disable) commit with the log, inside an explicit transaction."""
    if all(outcome.ok for _, outcome in outcomes):
        return _record(token, outcomes)
    with transaction.atomic():
        return _record(token, outcomes)


def _record(token: uuid.UUID, outcomes: list[tuple[Delivery, Outcome]]) -> dict:
    """Logs each attempt and moves each delivery on. Each `delivery` is the row as read right after the claim
    (its attempt_count is this attempt's number, its subscription the state at send time).
    Returns {delivery pk: "succeeded" | "retry" | "failed" | "stale"}.

    Every attempt is logged. Each delivery's update is conditional on the claim token: when the lease ran out and
    another worker claimed the delivery meanwhile, only the attempt is logged ("stale") and the other worker's
    claim stands. The log and all successes are one round trip (`_log_and_record_successes`); failures (rare) are
    one UPDATE each, as each has its own next due time.
    """
    now = timezone.now()
    mine = _log_and_record_successes(token, outcomes, now)
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
        if not Delivery.objects.filter(pk=delivery.pk, claim_token=token).update(**changes):
            result = "stale"
        else:
            mine.add(delivery.pk)
            failed.append((delivery, outcome, exhausted))
        results[delivery.pk] = result
    _update_health(outcomes, mine, failed, now)
    return results


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
           (id, created_at, updated_at, organization_id, delivery_id, number, trigger, status_code, duration_ms,
            response_body, error)
    SELECT gen_random_uuid(), %(now)s, %(now)s, a.organization_id, a.delivery_id, a.number, a.trigger,
           a.status_code, a.duration_ms, a.response_body, a.error
      FROM unnest(%(organization_id)s::uuid[], %(delivery_id)s::uuid[], %(number)s::int[], %(trigger)s::text[],
                  %(status_code)s::int[], %(duration_ms)s::int[], %(response_body)s::text[], %(error)s::text[])
           AS a(organization_id, delivery_id, number, trigger, status_code, duration_ms, response_body, error);
    UPDATE webhooks_delivery AS d
       SET status = 'succeeded', succeeded_at = %(now)s, next_attempt_at = NULL, last_status_code = ok.status_code,
           last_error = '', claimed_until = NULL, claim_token = NULL, enqueued_at = NULL, next_trigger = 'scheduled',
           updated_at = %(now)s, last_attempt_at = %(now)s
      FROM unnest(%(ok_ids)s::uuid[], %(ok_codes)s::int[]) AS ok(id, status_code)
     WHERE d.id = ok.id AND d.claim_token = %(token)s
    RETURNING d.id
"""


def _log_and_record_successes(token, outcomes, now) -> set:
    """Logs every attempt and marks the successful deliveries still held by `token` succeeded; returns their ids."""
    ok = [(delivery.pk, outcome.status_code) for delivery, outcome in outcomes if outcome.ok]
    params = {
        "now": now,
        "token": token,
        "organization_id": [d.organization_id for d, _ in outcomes],
        "delivery_id": [d.pk for d, _ in outcomes],
        "number": [d.attempt_count for d, _ in outcomes],
        "trigger": [d.next_trigger for d, _ in outcomes],
        "status_code": [o.status_code for _, o in outcomes],
        "duration_ms": [o.duration_ms for _, o in outcomes],
        "response_body": [o.body for _, o in outcomes],
        "error": [o.error for _, o in outcomes],
        "ok_ids": [pk for pk, _ in ok],
        "ok_codes": [code for _, code in ok],
    }
    with connection.cursor() as cursor:
        cursor.execute(_LOG_AND_SUCCEED_SQL, params)
        while cursor.description is None and cursor.nextset():  # past the SET's and the INSERT's results
            pass
        return {row[0] for row in cursor.fetchall()}


def _update_health(outcomes, mine, failed, now) -> None:
    """Subscription health once per subscription per batch: the last success, the start of a failure streak,
    410 and too-long-failing disables, exhaustion e-mails."""
    by_sub: dict = {}
    for delivery, outcome in outcomes:
        if delivery.pk in mine:
            by_sub.setdefault(delivery.subscription_id, (delivery.subscription, []))[1].append(outcome)
    for sub_id, (subscription, sub_outcomes) in by_sub.items():
        oks = [o.ok for o in sub_outcomes]
        if all(oks):
            # Health is written at most once a second per subscription, so a busy endpoint's row is not a hot spot.
            stale = subscription.last_success_at is None or subscription.last_success_at < now - timedelta(seconds=1)
            if subscription.failing_since is not None or stale:
                Subscription.objects.filter(pk=sub_id).update(last_success_at=now, failing_since=None)
        elif any(oks):
            # Sent concurrently, so there is no "last" outcome: the endpoint answered, and a new streak starts now.
            Subscription.objects.filter(pk=sub_id).update(last_success_at=now, failing_since=now)
        else:
            Subscription.objects.filter(pk=sub_id, failing_since__isnull=True).update(failing_since=now)
    failing_subs = []
    for delivery, outcome, exhausted in failed:
        sub_id = delivery.subscription_id
        if outcome.status_code == 410:
            _disable(sub_id, "The endpoint answered 410 Gone.", now)
        elif exhausted and delivery.next_trigger == DeliveryAttempt.Trigger.SCHEDULED:
            delivery.last_error = outcome.error
            _notify_exhausted(delivery)
        if sub_id not in failing_subs:
            failing_subs.append(sub_id)
    for sub_id in failing_subs:
        _disable_if_failing_too_long(sub_id, now)


def _disable(subscription_id, reason: str, now) -> bool:
    """Disables a subscription with a reason and emails its org's admins; False when it was already disabled."""
    subscription = Subscription.objects.select_for_update().get(pk=subscription_id)
    if not subscription.set_enabled(False, reason=reason, now=now):
        return False
    subscription.save(update_fields=[*Subscription.ENABLED_FIELDS, "updated_at"])
    # E-mail goes out one way, through the notifications outbox: org admins plus "webhook problems" recipients.
    notify_webhook_disabled(subscription=subscription, reason=reason)
    logger.warning("webhooks: disabled subscription %s: %s", subscription.pk, reason)
    return True


def _disable_if_failing_too_long(subscription_id, now) -> None:
    cutoff = now - timedelta(seconds=conf.disable_after_seconds())
    if Subscription.objects.filter(pk=subscription_id, enabled=True, failing_since__lte=cutoff).exists():
        days = conf.disable_after_seconds() / 86400
        _disable(subscription_id, f"Every delivery failed for {days:g} days straight.", now)


def _notify_exhausted(delivery: Delivery) -> None:
    subscription = Subscription.objects.only("url", "organization_id").get(pk=delivery.subscription_id)
    notify_webhook_exhausted(delivery=delivery, subscription=subscription)


def due_deliveries():
    """Deliveries that are due and that nobody holds: new ones, retries whose time came, expired leases (the
    sweep's candidates; the claim's condition, as a queryset)."""
    now = timezone.now()
    return Delivery.objects.filter(status=Delivery.Status.PENDING, next_attempt_at__lte=now).filter(
        Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
    )
