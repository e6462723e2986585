"""The delivery history at scale (docs/webhooks.md#history-at-scale): what BENCH_HISTORY_ROWS (10,000,000) rows of
delivery history cost the claim, an endpoint's stats and its delivery-log page, and what the retention purge of that
history does to the live queue while it runs.

1. A live state: 20 subscriptions with 20 due deliveries each (the claim's work), and the measured subscription's
   recent activity: 1,000 delivered events with their attempts in the last 24 hours (its stats and its log page).
2. Each figure, median of many runs, with that live state alone ("empty history"), and the shared buffers the stats,
   the log page's and the claim's queries touch (EXPLAIN ANALYZE BUFFERS: the same each run, unlike milliseconds
   here; BENCH_HISTORY_PLANS names a file for their plans). The claim: the median of three series of 100, each
   on tables vacuumed of the previous series' rolled-back claims.
3. History: half the rows deliveries and half attempts (one each), finished, over the last 90 days, to all 20
   subscriptions (the measured one's only older than 7 days, so its own windows hold the same activity as in 2:
   what is compared is the cost of everyone else's and of older history), inserted oldest first as production
   writes them. VACUUM ANALYZE and a checkpoint, then each figure again; goal: within 20% of 2.
4. The retention purge of everything older than 30 days (two thirds of the history), in its batches, while another
   connection claims every 20 ms: each table's batch times (the last batches must cost what the first did), the
   claim's p50/p99/max before and during the purge, and the size of the queue's partial indexes before and after
   (the purge must neither lock nor bloat the live queue).

Needs PostgreSQL and Redis as the other benches (no worker runs: the claim is called directly, in a transaction
rolled back each time, so the live state stays the same). The whole run at 10M rows takes ~12 minutes on an idle
2-core machine (seeding ~6); BENCH_HISTORY_ROWS sets a smaller run. Leaves nothing behind (and vacuums after).
"""

import contextlib
import json
import os
import statistics
import threading
import time

from bench.webhook_delivery import percentile

HISTORY = int(os.environ.get("BENCH_HISTORY_ROWS", 10_000_000))
SUBS = 20
CHUNK_EVENTS = 25_000  # x 20 subscriptions: 500k deliveries and 500k attempts per transaction

_SEED_SQL = """
    WITH ev AS (
        INSERT INTO webhooks_event (id, organization_id, type, api_version, created_at, payload)
        SELECT 'evt_' || %(tag)s || '_' || g, %(org)s, 'call.ended', 'v1',
               %(now)s - interval '1 second' * %(spread)s * (1 - g::float8 / %(events)s), '\\x7b7d'::bytea
          FROM generate_series(%(lo)s, %(hi)s) AS g
        RETURNING id, created_at
    ), dl AS (
        INSERT INTO webhooks_delivery (id, organization_id, created_at, updated_at, event_id, subscription_id, status,
                                       attempt_count, next_trigger, last_error, priority, last_status_code,
                                       succeeded_at, last_attempt_at)
        SELECT gen_random_uuid(), %(org)s, ev.created_at, ev.created_at, ev.id, s.id, 'succeeded', 1, 'scheduled',
               '', 0, 200, ev.created_at, ev.created_at
          FROM ev CROSS JOIN unnest(%(subs)s::uuid[]) AS s(id)
         WHERE s.id IS DISTINCT FROM %(young_excluded)s OR ev.created_at < %(now)s - interval '7 days'
        RETURNING id, created_at, subscription_id
    ), at AS (
        INSERT INTO webhooks_deliveryattempt (id, created_at, updated_at, organization_id, delivery_id, subscription_id,
                                              number, trigger, status_code, duration_ms, response_body, error)
        SELECT gen_random_uuid(), dl.created_at, dl.created_at, %(org)s, dl.id, dl.subscription_id, 1, 'scheduled',
               CASE WHEN hashtext(dl.id::text) %% 10 = 0 THEN 503 ELSE 200 END, 20 + abs(hashtext(dl.id::text)) %% 200,
               '', CASE WHEN hashtext(dl.id::text) %% 10 = 0 THEN 'HTTP 503' ELSE '' END
          FROM dl
        RETURNING 1
    )
    SELECT count(*) FROM at
"""

_PENDING_SQL = """
    WITH ev AS (
        INSERT INTO webhooks_event (id, organization_id, type, api_version, created_at, payload)
        SELECT 'evt_live_' || g, %(org)s, 'call.ended', 'v1', %(now)s, '\\x7b7d'::bytea
          FROM generate_series(1, %(count)s) AS g
        RETURNING id
    )
    INSERT INTO webhooks_delivery (id, organization_id, created_at, updated_at, event_id, subscription_id, status,
                                   attempt_count, next_attempt_at, next_trigger, last_error, priority)
    SELECT gen_random_uuid(), %(org)s, %(now)s - interval '2 days', %(now)s, ev.id, s.id, 'pending', 0, %(now)s,
           'scheduled', '', 0
      FROM ev CROSS JOIN unnest(%(subs)s::uuid[]) AS s(id)
"""


# The subscriptions too: each claim updates the rows it serves (rolled back here, dead rows all the same), and
# without this the second measurement would pay for the first one's claims, not for the history.
_VACUUM_SQL = "VACUUM (ANALYZE) webhooks_delivery, webhooks_deliveryattempt, webhooks_event, webhooks_subscription"


def _settle(cursor):
    """VACUUM ANALYZE, then a checkpoint (superuser only; skipped otherwise): right after seeding millions of rows
    and vacuuming them, shared buffers are full of dirty pages that the next queries' backends would have to write
    out themselves to find room, a cost of the bulk load and not of the history's size."""
    from django.db import DatabaseError

    cursor.execute(_VACUUM_SQL)
    with contextlib.suppress(DatabaseError):
        cursor.execute("CHECKPOINT")


def _ms(fn, runs):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _buffers(cursor, sql, params) -> int:
    """Shared buffers one statement touches (planning and execution, hits and reads): unlike milliseconds on a
    shared machine, the same figure each run, so what history adds to a read shows here first."""
    cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params)
    plan = cursor.fetchone()[0]
    plan = plan[0] if isinstance(plan, list) else plan
    if os.environ.get("BENCH_HISTORY_PLANS"):
        with open(os.environ["BENCH_HISTORY_PLANS"], "a") as out:
            out.write(json.dumps(plan, indent=1) + "\n")
    touched = 0
    for part in (plan["Plan"], plan.get("Planning", {})):
        touched += part.get("Shared Hit Blocks", 0) + part.get("Shared Read Blocks", 0)
    return touched


def measure(sub):
    from django.db import connection, transaction
    from django.utils import timezone

    from webhooks import selectors
    from webhooks.delivery.claim import claim
    from webhooks.models import DeliveryAttempt
    from webhooks.selectors import _STATS_SQL, STATS_WINDOWS, TOP_ERRORS

    def one_claim():
        with transaction.atomic():
            assert claim(extra=8)[1]
            transaction.set_rollback(True)

    def page_query():
        return selectors.delivery_log(sub).order_by("-created_at", "-id")[:20]

    def log_page():
        page = list(page_query())
        assert len(page) == 20 and [d.attempts.all() for d in page]  # the attempts prefetched too

    def round_trip():
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")

    def claims(runs, series=3):
        # Each claim here is rolled back, so every run claims the same 8 deliveries again: 300 in a row leave 300 dead
        # versions of those rows and of their index entries, which no real claim (of fresh rows, committed) ever
        # meets. So: the median of a few series, each on a table vacuumed of the previous series' dead versions.
        medians = []
        for _ in range(series):
            with connection.cursor() as cursor:
                cursor.execute("VACUUM webhooks_delivery, webhooks_subscription")
            one_claim()
            medians.append(_ms(one_claim, runs))
        return statistics.median(medians)

    one_claim(), selectors.subscription_stats(sub), log_page()  # warm caches
    figures = {
        "claim": claims(100),
        "stats": _ms(lambda: selectors.subscription_stats(sub), 100),
        "log page": _ms(log_page, 100),
        "round trip": _ms(round_trip, 300),  # the machine's drift between the two measurements, for reading them
    }
    now = timezone.now()
    params = {"sub": sub.pk, "names": [n for n, _ in STATS_WINDOWS], "starts": [now - s for _, s in STATS_WINDOWS],
              "top": TOP_ERRORS}
    ids = [d.pk for d in page_query().prefetch_related(None)]
    attempts = DeliveryAttempt.objects.filter(delivery_id__in=ids).order_by("created_at", "number")
    with connection.cursor() as cursor:
        figures["stats buffers"] = sum(_buffers(cursor, sql, params) for sql in _STATS_SQL.split(";") if sql.strip())
        page_sql, page_params = page_query().prefetch_related(None).query.sql_with_params()
        attempts_sql, attempts_params = attempts.query.sql_with_params()
        figures["log page buffers"] = _buffers(cursor, page_sql, page_params) + _buffers(
            cursor, attempts_sql, attempts_params)
    figures["claim buffers"] = _claim_buffers()
    return figures


def _claim_buffers() -> int:
    """Shared buffers the claim's two statements touch, planned as the claim plans them (rolled back)."""
    from django.db import connection, transaction

    from webhooks.delivery.claim import _ARGUMENTS, _claim_params, _prepare_claims

    _, params = _claim_params([], 8)
    with connection.cursor() as cursor, transaction.atomic():
        _prepare_claims(cursor)
        cursor.execute("SET LOCAL plan_cache_mode TO force_custom_plan")
        touched = sum(_buffers(cursor, f"EXECUTE {name}({_ARGUMENTS})", params)
                      for name in ("webhooks_claim_lock_fair", "webhooks_claim_fair"))
        transaction.set_rollback(True)
    return touched


def queue_index_bytes(cursor) -> int:
    cursor.execute("SELECT sum(pg_relation_size(c.oid)) FROM pg_class c WHERE c.relname = ANY(%s)",
                   [["webhooks_delivery_sub_due", "webhooks_delivery_due", "webhooks_delivery_inflight"]])
    return int(cursor.fetchone()[0])


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "voiceagent.settings")
    os.environ["DEBUG"] = "false"
    os.environ["WEBHOOK_LOCAL_URLS_OUTSIDE_DEBUG"] = "1"  # whatever .env says: nothing is sent here
    os.environ.setdefault("EMAIL_URL", "smtp://127.0.0.1:1")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, connections
    from django.utils import timezone

    from orgs.models import Organization
    from webhooks import crypto
    from webhooks.delivery.claim import claim
    from webhooks.models import Subscription
    from webhooks.retention import delivery_log_purge

    call_command("migrate", verbosity=0)
    org = Organization.objects.create(name="bench history")
    try:
        subs = [
            Subscription.objects.create(organization=org, url=f"https://hooks.example.com/{n}", events=["call.ended"],
                                        secret_encrypted=crypto.encrypt(crypto.generate_secret()), secret_preview="x")
            for n in range(SUBS)
        ]
        measured = subs[0]
        ids = [s.pk for s in subs]
        now = timezone.now()
        with connection.cursor() as cursor:
            cursor.execute(_PENDING_SQL, {"org": org.pk, "now": now, "count": 20, "subs": ids})
            cursor.execute(_SEED_SQL, {"tag": "recent", "org": org.pk, "now": now, "spread": 86400, "lo": 1,
                                       "hi": 1000, "events": 1000, "subs": [measured.pk], "young_excluded": None})
            _settle(cursor)
        empty = measure(measured)

        # In time order, oldest first, as production inserts them (the purge's walk and the heap's order agree).
        seeded, started = 0, time.time()
        events = max(1, HISTORY // 2 // SUBS)
        for lo in range(1, events + 1, CHUNK_EVENTS):
            with connection.cursor() as cursor:
                cursor.execute(_SEED_SQL, {"tag": "hist", "org": org.pk, "now": now, "spread": 90 * 86400, "lo": lo,
                                           "hi": min(events, lo + CHUNK_EVENTS - 1), "events": events, "subs": ids,
                                           "young_excluded": measured.pk})
                seeded += 2 * cursor.fetchone()[0]
        seed_seconds = time.time() - started
        with connection.cursor() as cursor:
            _settle(cursor)
        vacuum_seconds = time.time() - started - seed_seconds
        full = measure(measured)
        print(f"history: {seeded:,} rows (deliveries + attempts, 90 days, {SUBS} subscriptions) seeded in "
              f"{seed_seconds:.0f} s, then VACUUM ANALYZE and CHECKPOINT {vacuum_seconds:.0f} s", flush=True)
        for name in ("claim", "stats", "log page"):
            print(f"{name + ':':10} {empty[name]:7.3f} ms empty, {full[name]:7.3f} ms with history = "
                  f"{full[name] / empty[name]:.2f} x  (goal <= 1.20)", flush=True)
        for name in ("stats buffers", "log page buffers", "claim buffers"):
            print(f"{name + ':':18} {empty[name]:,} empty, {full[name]:,} with history (EXPLAIN ANALYZE BUFFERS)")
        print(f"round trip (SELECT 1, the machine's drift): {empty['round trip']:.3f} ms empty, "
              f"{full['round trip']:.3f} ms with history", flush=True)

        # The purge, with a claim every 20 ms from another connection.
        with connection.cursor() as cursor:
            index_before = queue_index_bytes(cursor)
        latencies = {"before": [], "during": []}
        phase = ["before"]
        stop = threading.Event()

        def claimer():
            from django.db import transaction

            try:
                while not stop.is_set():
                    t0 = time.perf_counter()
                    with transaction.atomic():
                        claim(extra=8)
                        transaction.set_rollback(True)
                    latencies[phase[0]].append((time.perf_counter() - t0) * 1000)
                    time.sleep(0.02)
            finally:
                connections.close_all()

        batches = {}

        def on_batch(table, _until, deleted, seconds):
            batches.setdefault(table, []).append((deleted, seconds * 1000))

        probe = threading.Thread(target=claimer)
        probe.start()
        time.sleep(10)
        phase[0] = "during"
        purge_started = time.time()
        purged = delivery_log_purge(on_batch=on_batch)
        purge_seconds = time.time() - purge_started
        stop.set()
        probe.join()
        with connection.cursor() as cursor:
            index_after = queue_index_bytes(cursor)

        print(f"purge: {purged:,} attempts (and their deliveries and events) in {purge_seconds:.0f} s, batches of 5000")
        for table, done in batches.items():
            ms = [m for _, m in done]
            tenth = max(1, len(ms) // 10)
            print(f"  {table}: {sum(n for n, _ in done):,} rows in {len(done)} batches, per batch p50 "
                  f"{statistics.median(ms):.0f} ms, max {max(ms):.0f} ms; first tenth p50 "
                  f"{statistics.median(ms[:tenth]):.0f} ms, last tenth {statistics.median(ms[-tenth:]):.0f} ms")
        before, during = latencies["before"], latencies["during"]
        print(f"claim while purging: p50 {statistics.median(during):.2f} ms, p99 {percentile(during, 99):.2f} ms, "
              f"max {max(during):.2f} ms ({len(during)} claims); before: p50 {statistics.median(before):.2f} ms, "
              f"p99 {percentile(before, 99):.2f} ms ({len(before)} claims)")
        print(f"queue's partial indexes: {index_before / 1024:.0f} KiB before the purge, {index_after / 1024:.0f} KiB "
              "after", flush=True)
    finally:
        started = time.time()
        with connection.cursor() as cursor:
            for table in ("webhooks_deliveryattempt", "webhooks_delivery", "webhooks_event"):
                cursor.execute(f"DELETE FROM {table} WHERE organization_id = %s", [org.pk])  # noqa: S608
        org.delete()
        with connection.cursor() as cursor:
            cursor.execute(_VACUUM_SQL)  # not millions of dead rows for whatever runs next (autovacuum may be off)
        print(f"(cleanup: {time.time() - started:.0f} s)")
