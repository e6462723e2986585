"""Sending deliveries: claim, POST, record, schedule the next try (`send_batch`, the `deliver_batch` task's body).
Which deliveries are due (what the sweep publishes) is `selectors.due_deliveries`.

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
import weakref
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import timedelta

import psycopg
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce, Greatest

from core import dbclock
from core.timefmt import iso_ms
from notifications.services import (
    notify_webhook_exhausted,
    notify_webhook_failing,
    notify_webhook_recovered,
)

from . import (
    conf,
    crypto,
    services,  # the module, not its names: services imports this one (through tasks)
)
from .models import Delivery, DeliveryAttempt, Subscription
from .ssrf import masked_url
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
# One round trip: the async-commit setting, the locking statement and the claim, sent as one query outside any
# transaction block. PostgreSQL runs such a multi-statement query as one implicit transaction, where SET LOCAL, the
# row locks and a transaction-local setting hold until its end (docs: protocol-flow, "Multiple Statements in a
# Simple Query"); an explicit BEGIN and COMMIT are two more round trips.
#
# Fair delivery (docs/webhooks.md#fair-delivery), in two statements of that one query:
#
# 1. Pick and lock. Which subscriptions have deliveries due and unleased (a skip scan of webhooks_delivery_sub_due:
#    one index probe per subscription with pending deliveries, however long its backlog), are not paused, under
#    their rate cap's horizon and (as this snapshot sees it) under their in-flight limit; the `limit` served longest
#    ago first (`claimed_at`: round robin across claims, worker processes and machines), row-locked with SKIP LOCKED.
#    Two claims never wait for each other: each takes subscriptions the other has not. Their ids go to the second
#    statement through a transaction-local setting.
# 2. Claim. A statement's snapshot is taken when it starts, so this one sees every claim committed before the locks
#    of statement 1 were granted: every earlier claim of these subscriptions held the same row locks until its commit.
#    The in-flight counts (live leases, by index) and the rate-cap state it reads are therefore exact across
#    processes, without a lock shared by all claims (one advisory lock serialized them before, and a drain's claims
#    spent much of their time queueing for it: docs/benchmarks.md#figures-behind-the-code). Per subscription: its free
#    share = its in-flight limit minus its live claims, and, with a rate cap, at most the send slots of the next
#    RATE_HORIZON seconds (GCRA: slot k is rate_tat + k/rate). Each subscription's due deliveries are taken live first,
#    then replays (priority), oldest first, up to its share; across subscriptions they are ranked round robin (every
#    subscription's first before anyone's second). Every locked subscription's `claimed_at` moves to now, so the next
#    claim serves others first.
#
# One clock: every time the claim compares or sets (due, leased until, the rate cap's slots, `claimed_at`) is
# PostgreSQL's statement_timestamp(), the time the server received the claim's query, the same for both statements,
# never the worker's: a worker whose clock runs ahead would otherwise take leases other workers still hold, and hand
# out rate-capped slots that are already past. (Not now(): inside an enclosing transaction that is its start, older
# than rows the transaction wrote since with Django's Now(), which is statement_timestamp() too.) Send slots come back
# as seconds from that time, and the lock statement returns it, which sets the worker's offset to PostgreSQL's clock
# (core/dbclock.py) for what it computes between statements.
#
# Two spellings keep the plan from hinging on how many deliveries the statistics say are pending: on a table analyzed
# with a long history and a nearly empty queue, PostgreSQL takes the queue for one row, and a backlog that came after
# (autovacuum analyzes again only once a tenth of the table has changed) was then read whole by every claim
# (bench.webhook_history; tests/webhooks/test_fairness.py). `OFFSET 0` keeps statement 1's "has due work" an index
# probe per subscription: PostgreSQL would otherwise turn that EXISTS into a join that reads every due delivery.
# `d.status || ''` keeps statement 2's lock on the primary key: written plainly, it matches the pending-only partial
# indexes, and the planner locked the picked deliveries by walking the queue.
_DUE_AND_UNLEASED = """d.status = 'pending' AND d.next_attempt_at <= statement_timestamp()
                       AND (d.claimed_until IS NULL OR d.claimed_until < statement_timestamp())"""

_LIVE_CLAIMS = """(SELECT count(*) FROM webhooks_delivery AS f
                     WHERE f.subscription_id = s.id AND f.claim_token IS NOT NULL
                       AND f.claimed_until > statement_timestamp())"""

# How many claims a subscription may have live (`_CLAIM_CAP`): its in-flight limit, unless the claim asks to claim
# ahead (`ahead` > 1, send_batch's claims, all under one token per run), the subscription is at its full share and no
# other run holds a live claim of it (and it has no rate cap, whose send slots keep their own order): then `ahead`
# times the limit, which that run sends at most the limit of at once
# (send_batch's per-subscription gate). So the POSTs in flight to an endpoint never exceed its limit: either one run
# holds all of its claims, or they number at most the limit (a run that claims while another holds any gets the limit
# minus every live claim). Claiming ahead lets one busy endpoint's next POSTs wait in the sending process instead of
# behind a record and a claim: with only its limit claimed, each of its places sat idle for a round trip or two
# between POSTs (bench.webhook_delivery's one busy subscription; docs/benchmarks.md).
_OTHERS_HOLD = """EXISTS (SELECT 1 FROM webhooks_delivery AS o
                           WHERE o.subscription_id = s.id AND o.claim_token IS NOT NULL
                             AND o.claimed_until > statement_timestamp() AND o.claim_token <> %(token)s)"""

_CLAIM_CAP = f"""CASE WHEN %(ahead)s > 1 AND s.in_flight_limit IS NULL AND s.rate_limit_per_second IS NULL
                          AND NOT {_OTHERS_HOLD}
                     THEN %(max_in_flight)s * %(ahead)s
                     ELSE COALESCE(s.in_flight_limit, %(max_in_flight)s) END"""

_LOCK_FAIR_SQL = """
    WITH RECURSIVE subs AS (
        (SELECT subscription_id AS id FROM webhooks_delivery
          WHERE status = 'pending' ORDER BY subscription_id LIMIT 1)
        UNION ALL
        SELECT (SELECT d.subscription_id FROM webhooks_delivery AS d
                 WHERE d.status = 'pending' AND d.subscription_id > subs.id ORDER BY d.subscription_id LIMIT 1)
          FROM subs WHERE subs.id IS NOT NULL
    ), eligible AS (
        SELECT s.id FROM webhooks_subscription AS s
         WHERE s.id IN (SELECT id FROM subs WHERE id IS NOT NULL)
           AND (s.paused_until IS NULL OR s.paused_until <= statement_timestamp())
           AND (s.rate_tat IS NULL OR s.rate_tat < statement_timestamp() + %(horizon)s * interval '1 second')
           AND {claim_cap} > {live_claims}
           AND EXISTS (SELECT 1 FROM webhooks_delivery AS d
                        WHERE d.subscription_id = s.id AND d.priority = ANY('{{0,1}}'::smallint[])
                          AND {due_and_unleased} OFFSET 0)
    ), locked AS (
        SELECT s.id FROM webhooks_subscription AS s
         WHERE s.id IN (SELECT id FROM eligible)
         ORDER BY s.claimed_at NULLS FIRST, s.id
         LIMIT %(limit)s
           FOR UPDATE OF s SKIP LOCKED
    )
    SELECT set_config('webhooks.claim_subs', COALESCE((SELECT string_agg(id::text, ',') FROM locked), ''), true),
           (SELECT count(*) FROM eligible), statement_timestamp();"""

# The deliveries asked for by id (a manual path and the tests): their subscriptions, locked in id order, waiting.
_LOCK_ASKED_SQL = """
    SELECT set_config('webhooks.claim_subs', COALESCE(string_agg(locked.id::text, ','), ''), true), 0,
           statement_timestamp() FROM (
        SELECT s.id FROM webhooks_subscription AS s
         WHERE s.id IN (SELECT subscription_id FROM webhooks_delivery WHERE id = ANY(%(ids)s::uuid[]))
         ORDER BY s.id
           FOR UPDATE OF s
    ) AS locked;"""

_LOCKED_SUBS = """subs AS (
        SELECT unnest(string_to_array(NULLIF(current_setting('webhooks.claim_subs', true), ''), ','))::uuid AS id
    )"""

_FAIR_CANDIDATES = """
    {locked_subs}, {share}, cand AS (
        SELECT c.id, share.id AS sub, c.priority, c.next_attempt_at
          FROM share CROSS JOIN LATERAL (
               SELECT * FROM (
                   (SELECT d.id, d.priority, d.next_attempt_at FROM webhooks_delivery AS d
                     WHERE d.subscription_id = share.id AND d.priority = 0 AND {due_and_unleased}
                     ORDER BY d.next_attempt_at LIMIT share.free)
                   UNION ALL
                   (SELECT d.id, d.priority, d.next_attempt_at FROM webhooks_delivery AS d
                     WHERE d.subscription_id = share.id AND d.priority > 0 AND {due_and_unleased}
                     ORDER BY d.priority, d.next_attempt_at LIMIT share.free)
               ) AS both_ LIMIT share.free
          ) AS c
         WHERE share.free > 0
    )"""

_ASKED_CANDIDATES = """
    {locked_subs}, asked AS (
        SELECT d.id, d.subscription_id AS sub, d.priority, d.next_attempt_at FROM webhooks_delivery AS d
         WHERE d.id = ANY(%(ids)s::uuid[]) AND d.subscription_id IN (SELECT id FROM subs) AND {due_and_unleased}
    ), {share}, cand AS (
        SELECT asked.* FROM asked JOIN share ON share.id = asked.sub WHERE share.free > 0
    )"""

_SHARE = """share AS (
        SELECT s.id, s.rate_limit_per_second AS rate, GREATEST(s.rate_tat, statement_timestamp()) AS slot,
               LEAST(
                   {claim_cap} - {live_claims},
                   CASE WHEN s.rate_limit_per_second IS NULL THEN %(limit)s
                        ELSE floor(extract(epoch FROM statement_timestamp() + %(horizon)s * interval '1 second'
                                                     - GREATEST(s.rate_tat, statement_timestamp()))
                                   * s.rate_limit_per_second)
                   END
               )::int AS free
          FROM subs JOIN webhooks_subscription AS s ON s.id = subs.id
         WHERE s.paused_until IS NULL OR s.paused_until <= statement_timestamp()
    )"""

_CLAIM_TEMPLATE = """
    WITH {candidates}, ranked AS (
        SELECT cand.*, row_number() OVER (PARTITION BY cand.sub ORDER BY cand.priority, cand.next_attempt_at) AS rn
          FROM cand
    ), picked AS (
        SELECT ranked.id FROM ranked JOIN share ON share.id = ranked.sub
         WHERE ranked.rn <= share.free
         ORDER BY ranked.rn, ranked.priority, ranked.next_attempt_at
         LIMIT %(limit)s
    ), locked AS (
        SELECT d.id FROM webhooks_delivery AS d
         WHERE d.id IN (SELECT id FROM picked) AND d.status || '' = 'pending'
           AND (d.claimed_until IS NULL OR d.claimed_until < statement_timestamp())
           FOR UPDATE SKIP LOCKED
    ), claimed AS (
        UPDATE webhooks_delivery AS d
           SET claimed_until = statement_timestamp() + %(lease)s * interval '1 second', claim_token = %(token)s,
               attempt_count = d.attempt_count + 1
          FROM locked
         WHERE d.id = locked.id
        RETURNING d.id, d.organization_id, d.attempt_count, d.next_trigger, d.subscription_id, d.event_id,
                  d.priority, d.next_attempt_at
    ), slotted AS (
        SELECT claimed.*, row_number() OVER (PARTITION BY claimed.subscription_id
                                             ORDER BY claimed.priority, claimed.next_attempt_at) - 1 AS k
          FROM claimed
    ), served AS (
        UPDATE webhooks_subscription AS s
           SET claimed_at = statement_timestamp(),
               rate_tat = CASE WHEN share.rate IS NOT NULL AND n.taken IS NOT NULL
                               THEN share.slot + n.taken * interval '1 second' / share.rate
                               ELSE s.rate_tat END
          FROM share LEFT JOIN (SELECT subscription_id, count(*) AS taken FROM claimed GROUP BY subscription_id) AS n
               ON n.subscription_id = share.id
         WHERE s.id = share.id
    )
    SELECT slotted.id, slotted.organization_id, slotted.attempt_count, slotted.next_trigger, slotted.subscription_id,
           slotted.event_id, e.payload,
           CASE WHEN share.rate IS NULL THEN NULL
                ELSE extract(epoch FROM share.slot + slotted.k * interval '1 second' / share.rate
                                        - statement_timestamp())::float8 END,
           {subscription_columns}
      FROM slotted JOIN share ON share.id = slotted.subscription_id JOIN webhooks_event AS e ON e.id = slotted.event_id
      JOIN webhooks_subscription AS sub ON sub.id = slotted.subscription_id
"""
# What sending and recording need of each claimed delivery's subscription, read by the claim itself (a query of its
# own per claim cost a worker as much as the claim).
_SUBSCRIPTION_FIELDS = (
    "organization_id", "url", "enabled", "secret_encrypted", "previous_secret_encrypted", "previous_secret_expires_at",
    "last_success_at", "failing_since", "in_flight_limit", "paused_until", "failing_announced_at",
)

_SUBSCRIPTION_COLUMNS = ", ".join(f"sub.{name}" for name in _SUBSCRIPTION_FIELDS)
_PARTS = {
    "due_and_unleased": _DUE_AND_UNLEASED, "locked_subs": _LOCKED_SUBS, "live_claims": _LIVE_CLAIMS,
    "claim_cap": _CLAIM_CAP, "share": _SHARE.format(live_claims=_LIVE_CLAIMS, claim_cap=_CLAIM_CAP),
}
# Both claims are prepared once per database session (PREPARE): each claim then sends two short EXECUTEs, not the
# statements' text, and the server skips parsing and rewriting them. A query of several statements cannot go through
# the extended protocol's prepared statements, but SQL's PREPARE and EXECUTE work in a simple query, so the claim
# stays one round trip.
#
# They are planned on every EXECUTE all the same: they always get a custom plan, made for the EXECUTE's own values
# with the statistics of that moment (force_custom_plan). By default PostgreSQL switches a prepared statement to one
# generic plan after five EXECUTEs if that plan looks no dearer, and it looks cheap exactly when the statistics say
# the queue is nearly empty: in bench.webhook_delivery (the tables analyzed before the backlog came, autovacuum off)
# the generic claims scanned all of webhooks_delivery sequentially for the whole drain (auto_explain), and a generic
# plan is only made again when the tables are analyzed. Custom planning costs little and the same with an empty
# history as with 10 million rows of it, where forced generic plans made every claim many times slower
# (docs/benchmarks.md#figures-behind-the-code).
_PARAMS = ("lease", "token", "ids", "limit", "max_in_flight", "horizon", "ahead")
_PARAM_TYPES = "float8, uuid, uuid[], int, int, float8, int"


def _numbered(sql: str) -> str:
    for position, name in enumerate(_PARAMS, start=1):
        sql = sql.replace(f"%({name})s", f"${position}")
    return sql


_STATEMENTS = {
    "webhooks_claim_lock_fair": _LOCK_FAIR_SQL.format(**_PARTS),
    "webhooks_claim_lock_asked": _LOCK_ASKED_SQL,
    "webhooks_claim_fair": _CLAIM_TEMPLATE.format(
        candidates=_FAIR_CANDIDATES.format(**_PARTS), subscription_columns=_SUBSCRIPTION_COLUMNS
    ),
    "webhooks_claim_asked": _CLAIM_TEMPLATE.format(
        candidates=_ASKED_CANDIDATES.format(**_PARTS), subscription_columns=_SUBSCRIPTION_COLUMNS
    ),
}
_PREPARE_SQL = "".join(
    f"PREPARE {name}({_PARAM_TYPES}) AS {_numbered(sql).strip().rstrip(';')};" for name, sql in _STATEMENTS.items()
)
_ARGUMENTS = ", ".join(f"%({name})s" for name in _PARAMS)
_CLAIM_SETTINGS = "SET LOCAL synchronous_commit TO OFF; SET LOCAL plan_cache_mode TO force_custom_plan;"
_CLAIM_FAIR_SQL = (
    f"{_CLAIM_SETTINGS} EXECUTE webhooks_claim_lock_fair({_ARGUMENTS});"
    f" EXECUTE webhooks_claim_fair({_ARGUMENTS})"
)
_CLAIM_ASKED_SQL = (
    f"{_CLAIM_SETTINGS} EXECUTE webhooks_claim_lock_asked({_ARGUMENTS});"
    f" EXECUTE webhooks_claim_asked({_ARGUMENTS})"
)
# Behind a transaction-mode pooler (DATABASE_POOLING=transaction) a session's PREPAREd statements are not there for
# its next transaction (another server connection may serve it, or hold the same names already): the claim then sends
# the statements' text in its one query. Each is planned afresh anyway (an unnamed statement always gets a custom
# plan), so only the parse is paid again.
_INLINE_SETTINGS = "SET LOCAL synchronous_commit TO OFF;"
_CLAIM_FAIR_INLINE_SQL = (
    f"{_INLINE_SETTINGS} {_STATEMENTS['webhooks_claim_lock_fair'].strip().rstrip(';')};"
    f" {_STATEMENTS['webhooks_claim_fair'].strip()}"
)
_CLAIM_ASKED_INLINE_SQL = (
    f"{_INLINE_SETTINGS} {_STATEMENTS['webhooks_claim_lock_asked'].strip().rstrip(';')};"
    f" {_STATEMENTS['webhooks_claim_asked'].strip()}"
)
_prepared = weakref.WeakSet()  # the psycopg connections (database sessions) that hold the statements


def _pooled() -> bool:
    """Whether the database is reached through a transaction-mode pooler: no state may outlive a transaction."""
    return settings.DATABASE_POOLING == "transaction"


def _claim_sql(*, fair: bool) -> str:
    """The claim's query (a fair one, or of the deliveries asked for): EXECUTEs of the prepared statements, or their
    text behind a transaction-mode pooler."""
    if _pooled():
        return _CLAIM_FAIR_INLINE_SQL if fair else _CLAIM_ASKED_INLINE_SQL
    return _CLAIM_FAIR_SQL if fair else _CLAIM_ASKED_SQL


def _prepare_claims(cursor) -> None:
    """PREPAREs the claim statements on this database session the first time it claims (a statement of its own, so a
    failure later in a claim never leaves a session whose statements exist but are not known to)."""
    raw = connection.connection
    if raw not in _prepared:
        cursor.execute(_PREPARE_SQL)
        _prepared.add(raw)


def _execute_claiming(cursor, sql: str, params: dict) -> None:
    """Runs a query that holds a claim (`_claim_sql`). With prepared statements: preparing them first on a new
    session; once more if the session lost them (DISCARD ALL, as a connection pooler's reset runs). Outside a
    transaction block only then: inside one, the failed statement has aborted it."""
    if _pooled():
        cursor.execute(sql, params)
        return
    _prepare_claims(cursor)
    try:
        cursor.execute(sql, params)
    except DatabaseError as exc:
        if not isinstance(exc.__cause__, psycopg.errors.InvalidSqlStatementName) or connection.in_atomic_block:
            raise
        _prepared.discard(connection.connection)
        _prepare_claims(cursor)
        cursor.execute(sql, params)


# How far ahead a rate-capped subscription's send slots may be handed out (its threads wait for their slot).
RATE_HORIZON = 1.0


def claim(delivery_ids=(), *, extra: int = 0) -> tuple[uuid.UUID, list[tuple]]:
    """Claims deliveries for one attempt each, within every subscription's fair share (its in-flight limit, its
    rate cap, a 429's pause): with `extra` > 0, up to `extra` due deliveries of any subscriptions, round robin (the
    ids given are only what the caller reports on); with `extra` = 0, those of `delivery_ids` that are due, pending
    and unleased. Returns the claim token and, for each delivery claimed, (id, organization_id, attempt_count,
    next_trigger, subscription_id, event_id, payload, send_at): send_at is the rate-capped slot before which the
    POST must not start, in seconds from the claim's time on PostgreSQL's clock (None without a cap); then the
    subscription's _SUBSCRIPTION_FIELDS.

    The rows are row-locked with SKIP LOCKED and re-checked after the lock, so two workers never claim the same
    attempt; a claimed id whose own task runs later finds the lease and does nothing ("skipped").
    """
    token, rows, _ = _claim(delivery_ids, extra)
    return token, rows


def _claim(delivery_ids=(), extra: int = 0, *, token: uuid.UUID | None = None,
           ahead: int = 1) -> tuple[uuid.UUID, list[tuple], bool]:
    """`claim`, and whether it came back empty only because other claims held every subscription it could have
    served (they are sending; trying again in a moment finds others, or these again). `token`: the claim's (a new
    one when None); `ahead`: see _CLAIM_CAP (a fair claim's only)."""
    fair = extra > 0
    ids = [uuid.UUID(str(pk)) for pk in delivery_ids]
    token, params = _claim_params(ids, extra, token=token, ahead=ahead)
    if not fair and not ids:
        return token, [], False
    with connection.cursor() as cursor:
        _execute_claiming(cursor, _claim_sql(fair=fair), params)
        return (token, *_fetch_claim(cursor))


def _fetch_claim(cursor) -> tuple[list[tuple], bool]:
    """The claimed rows of a query positioned before the claim's locking statement, and whether it was contended
    (subscriptions were eligible, none could be locked, nothing claimed)."""
    while cursor.description is None and cursor.nextset():  # past the SET, to the locking statement's row
        pass
    locked, eligible, database_now = cursor.fetchone()
    dbclock.observe(database_now)
    cursor.nextset()
    rows = cursor.fetchall()
    return rows, not rows and not locked and eligible > 0


def _claim_params(ids: list, extra: int, *, token: uuid.UUID | None = None, ahead: int = 1) -> tuple[uuid.UUID, dict]:
    token = token or uuid.uuid4()
    return token, {
        "lease": float(conf.lease_seconds()), "token": token, "ids": ids,
        "limit": int(extra) if extra > 0 else max(1, len(ids)), "max_in_flight": conf.max_in_flight(),
        "horizon": RATE_HORIZON, "ahead": max(1, int(ahead)) if extra > 0 else 1,
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


def _release(token: uuid.UUID, delivery_ids) -> None:
    """Gives back claims whose POST never started: no attempt made, none counted, still due (the sweeper or
    another batch takes them)."""
    Delivery.objects.filter(pk__in=delivery_ids, claim_token=token).update(
        claimed_until=None, claim_token=None, attempt_count=F("attempt_count") - 1
    )


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
