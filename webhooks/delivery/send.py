"""Sending deliveries (`send_batch`, the `deliver_batch` task's body): claim (`claim`), sign (`build_headers`),
POST each within its subscription's share on this process's sender threads, and record the results as they come
(`record`), claiming more as POSTs finish.
"""

import os
import random
import threading
import time
import uuid
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass

from django.db.models import F

from core import dbclock

from .. import conf, crypto
from ..models import Delivery, Subscription
from ..transport import USER_AGENT, post
from .claim import _SUBSCRIPTION_FIELDS, _claim, claim
from .record import _settle, slow_reason


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
    Delivery rows, which have the same attributes). `attempt_count` is this attempt's number; `token` the claim's;
    `send_at` (monotonic) the rate-capped slot before which its POST must not start, `start_by` the time after
    which it must not start any more (the lease's safe window)."""

    pk: uuid.UUID
    organization_id: uuid.UUID
    attempt_count: int
    next_trigger: str
    subscription_id: uuid.UUID
    event_id: str
    payload: bytes
    subscription: Subscription
    token: uuid.UUID | None = None
    send_at: float | None = None
    start_by: float = 0.0
    headers: dict | None = None
    last_error: str = ""


def _with_subscriptions(token, rows, claimed_at: float) -> list[Claimed]:
    """Claimed deliveries from `claim`'s plain values (full model rows with their event and subscription joined in
    cost a worker more than the POST itself), each with its subscription as the claim read it."""
    start_by = claimed_at + _start_window()
    subscriptions: dict = {}
    claimed = []
    for row in rows:
        sub = subscriptions.get(row[4])
        if sub is None:
            fields = dict(zip(_SUBSCRIPTION_FIELDS, row[8:], strict=True))
            sub = subscriptions[row[4]] = Subscription(id=row[4], **fields)
        send_at = None if row[7] is None else claimed_at + row[7]  # row[7]: seconds from the claim's now()
        claimed.append(Claimed(*row[:6], bytes(row[6]), sub, token, send_at, start_by))
    return claimed


# A task keeps claiming as its POSTs finish (its sender threads never idle while fair work is due) for this long at
# most; if it was still finding work then, it hands over to a fresh task (a long task would outlive the broker's
# visibility timeout, and a chain of short ones lets a restarting worker stop between them).
REFILL_SECONDS = 20.0
RECORD_EVERY = 1.0
# After a POST finishes, others finishing within this much more are recorded (and refilled) with it: one round trip,
# and one claim for several free threads. A claim per finished POST would make claims and their round trips the
# bottleneck of a fast drain; a task refills once REFILL_AT of its threads are free (or all its POSTs are done).
LINGER = 0.003
# Three quarters rather than half: a claim and a record cost the database about the same whatever their size, so
# larger cycles cost less per delivery; the fairness goals still held (docs/benchmarks.md#figures-behind-the-code).
REFILL_AT = 0.75
# A fair claim that found every subscription it could serve held by other claims (row locks, SKIP LOCKED) tries
# again this many times, a few milliseconds apart, before its task decides nothing is due: those claims hold their
# locks for a millisecond or two, and a task that gave up would leave its process idle with work waiting.
CONTENDED_RETRIES = 10


class BatchResults(dict):
    more = False


def send_batch(delivery_ids, *, extra: int = 0) -> BatchResults:
    """Attempts deliveries, each at most once per claim, within every subscription's fair share (`claim`).

    With `extra` = 0: those of `delivery_ids` that are due and unclaimed, each as soon as its subscription's share
    allows (claimed again as this batch's own POSTs finish). With `extra` > 0 (a worker's task): any due deliveries,
    round robin across subscriptions, `extra` at first, then as many as this process has free sender threads each
    time POSTs finish, for REFILL_SECONDS at most. Results are recorded as they come (`record_batch`), so a slow
    receiver holds nobody else's. A duplicate run of the same batch claims nothing and sends nothing.

    Returns {delivery id: what happened} for the ids given and every delivery claimed: "skipped" (not due, or
    claimed by another worker), "succeeded", "retry", "failed", "disabled" (its subscription is off), "stale" (the
    lease ran out before the result came). Its `more` is True when a fair run stopped with work still due."""
    results = BatchResults({str(pk): "skipped" for pk in delivery_ids})
    asked = list(results)
    fair = extra > 0
    refill_until = time.monotonic() + REFILL_SECONDS
    pending: dict = {}
    tried: set = set()
    # Every fair claim of this run under one token, so a claim can tell this run's live claims from others' and
    # claim ahead (_CLAIM_CAP); each subscription's POSTs pass its gate, at most its in-flight limit at once.
    run = (uuid.uuid4(), conf.claim_ahead()) if fair else None
    gates: dict = {}
    slowed: set = set()

    def take(count: int) -> int:
        if fair:
            token, rows, contended = _claim(extra=count, token=run[0], ahead=run[1])
            for _ in range(CONTENDED_RETRIES):
                if not contended:
                    break
                time.sleep(random.uniform(0.001, 0.005))
                token, rows, contended = _claim(extra=count, token=run[0], ahead=run[1])
        else:
            wanted = [pk for pk in asked if pk not in tried]
            if not wanted:
                return 0
            token, rows = claim(wanted)
        return start(token, rows)

    def start(token, rows) -> int:
        if not rows:
            return 0
        tried.update(str(row[0]) for row in rows)  # claimed once per run: one attempt each, sent or given back
        for delivery in _prepare(token, rows, results):
            sub = delivery.subscription
            gate = gates.get(sub.pk)
            if gate is None:
                gate = gates[sub.pk] = threading.BoundedSemaphore(sub.in_flight_limit or conf.max_in_flight())
            job = _executor().submit(_send_gated, gate, slowed, sub.pk, delivery.start_by, delivery.send_at,
                                     sub.url, delivery.payload, delivery.headers)
            pending[job] = delivery
        return len(rows)

    took = take(extra if fair else len(asked))
    threads = conf.send_threads()
    settled_at = time.monotonic()
    ready: set = set()
    while pending:
        waiting = set(pending) - ready
        if waiting:
            timeout = max(0.0, settled_at + RECORD_EVERY - time.monotonic()) if ready else RECORD_EVERY
            done, _ = wait(waiting, timeout=timeout, return_when=FIRST_COMPLETED)
            if done and len(done) < len(waiting):
                more, _ = wait(waiting - done, timeout=LINGER, return_when=ALL_COMPLETED)
                done |= more
            ready |= done
        free = threads - len(pending) + len(ready)
        # Results are recorded (and threads refilled) once REFILL_AT of the threads are free, when every POST is
        # done, or RECORD_EVERY after the last time: each a round trip or two, so not after every single POST.
        if not ready or (len(ready) < len(pending) and free < max(1, int(threads * REFILL_AT))
                         and time.monotonic() - settled_at < RECORD_EVERY):
            continue
        finished = [(pending.pop(future), future.result()) for future in ready]  # _send_before never raises
        ready = set()
        refill = fair and time.monotonic() < refill_until
        claimed = _settle(finished, results, refill=free if refill else 0, run=run)
        settled_at = time.monotonic()
        if claimed is not None and not claimed[2]:
            took = start(*claimed[:2])
        elif refill or not fair:
            took = take(free)
    results.more = bool(fair and took and time.monotonic() >= refill_until)
    return results


def _prepare(token, rows, results) -> list[Claimed]:
    """The claimed deliveries ready to send (headers signed), after failing those of disabled subscriptions."""
    deliveries = _with_subscriptions(token, rows, time.monotonic())
    now = dbclock.now()
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
    secrets_by_sub = {}  # Fernet decryption once per subscription per claim
    for delivery in to_send:
        sub = delivery.subscription
        if sub.pk not in secrets_by_sub:
            secrets_by_sub[sub.pk] = sub.signing_secrets(now)
        delivery.headers = build_headers(
            event_id=delivery.event_id, body=delivery.payload, secrets_=secrets_by_sub[sub.pk]
        )
    return to_send


def _start_window() -> float:
    """How long after the claim a batch's POST may still start, so that it ends (TOTAL_TIMEOUT at most) well
    inside the lease and no other worker can claim and send the same attempt meanwhile. (Test settings use
    leases shorter than the request budget; half the lease then.)"""
    lease = conf.lease_seconds()
    return max(lease - conf.TOTAL_TIMEOUT - 5.0, lease / 2)


def _send_gated(gate, slowed: set, subscription_id, start_by: float, send_at: float | None, url: str, body: bytes,
                headers: dict[str, str]):
    """`_send_before` once the subscription's gate lets it (at most its in-flight limit of a run's POSTs at once);
    None, nothing sent, when one of the run's POSTs to it has slowed it down meanwhile (a timeout, a refusal, a 429):
    what the run claimed ahead goes back unsent, and the next claim gets the slowed share."""
    with gate:
        if subscription_id in slowed:
            return None
        outcome = _send_before(start_by, send_at, url, body, headers)
        if outcome is not None and slow_reason(outcome):
            slowed.add(subscription_id)
        return outcome


def _send_before(start_by: float, send_at: float | None, url: str, body: bytes, headers: dict[str, str]):
    """post() once the rate-capped slot `send_at` has come, unless that, or waiting for a free thread, is past
    `start_by`: then None, nothing sent."""
    if send_at is not None and send_at > time.monotonic():
        time.sleep(send_at - time.monotonic())
    if time.monotonic() > start_by:
        return None
    return post(url, body, headers)
