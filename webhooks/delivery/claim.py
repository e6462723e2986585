"""Claiming deliveries (`claim`): one round trip that takes due, unleased deliveries fairly across subscriptions
(each its in-flight limit, its rate cap, a 429's pause), sets each a lease and a token, and reads what sending needs.
Also giving back claims whose POST never started (`_release`).

Exactly-once per attempt: the claim is one conditional UPDATE (due, pending, no live lease). A duplicate task run
finds the lease and does nothing; only the token holder records the result (`record`). A worker killed mid-send
leaves the lease to expire; the sweeper then enqueues the delivery again (at least once, never lost).
"""

import uuid
import weakref

import psycopg
from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import F

from core import dbclock

from .. import conf
from ..models import Delivery

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


def _release(token: uuid.UUID, delivery_ids) -> None:
    """Gives back claims whose POST never started: no attempt made, none counted, still due (the sweeper or
    another batch takes them)."""
    Delivery.objects.filter(pk__in=delivery_ids, claim_token=token).update(
        claimed_until=None, claim_token=None, attempt_count=F("attempt_count") - 1
    )
