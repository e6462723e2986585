"""Call analytics over a year of an organization with 1,000,000 calls, measured in process (Django's test client, no
HTTP server) on PostgreSQL:
1. `GET /v1/analytics/calls` for the last 365 local days, each `group_by` (day, week, location, outcome), and one
   location's days: p50 and p99 of 100 rounds each; goal p50 < 50 ms.
2. The calls rollup's own costs: seeding the calls through its triggers (bulk statements of 50,000 calls), one
   runtime-like single-call write with and without the triggers, and the rebuild a time zone change runs.
3. Many nodes writing the org: 16 processes (a connection each, as 16 nodes) completing its calls at once against one
   (p50, p99, and the share of the writers' active time spent waiting on a lock); goal: 16 writers' p99 within 2x of one
   writer's, the triggers' cost per call < 2 ms. Then a read with the deltas those writes left, and the fold that moves
   them into the rollup.
The org ("Analytics Bench Org", Los Angeles time, 4 locations) and another org of 100,000 calls on the same days live
in a `voiceagent_bench_analytics` database (BENCH_ANALYTICS_DATABASE) on DATABASE_URL's server; the seeded calls are
kept between runs.
"""

import contextlib
import multiprocessing
import os
import random
import sys
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
CALLS = 1_000_000
OTHER_CALLS = 100_000
CHUNK = 50_000
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 100))
ORG = "Analytics Bench Org"
DATABASE = os.environ.get("BENCH_ANALYTICS_DATABASE", "voiceagent_bench_analytics")

# Calls spread evenly over the last 365 days (a multiplicative hash of their number), with every figure the analytics
# count varying: location, outcome, classification, disposition, duration, score and unanswered questions.
# `%(offset)s` numbers this chunk's calls after the ones already there.
SEED_SQL = """
INSERT INTO calls_call (id, organization_id, created_at, updated_at, runtime_call_id, status, started_at, ended_at,
                        duration_seconds, direction, from_number, disposition, classification, scorable, score,
                        summary, outcome, outcome_tags, trail, transcript, quality_checks, location_id, facts_used,
                        unanswered_questions, fields, redaction)
SELECT gen_random_uuid(), %(org)s, s.at, s.at, 'bench-' || (%(offset)s + g), 'completed', s.at,
       s.at + make_interval(secs => 30 + g %% 600), 30 + g %% 600, 'inbound',
       '+1415555' || lpad((g %% 10000)::text, 4, '0'),
       (ARRAY['completed', 'completed', 'transferred', 'escalated'])[1 + g %% 4],
       (ARRAY['real_engagement', 'real_engagement', 'real_engagement', 'robocall', 'wrong_number_hangup'])[1 + g %% 5],
       g %% 5 < 3, CASE WHEN g %% 5 < 3 THEN g %% 101 END, 'Bench call',
       (ARRAY['order', 'booking', 'question', 'message', 'hours', ''])[1 + g %% 6], '[]', '[]', '[]', '[]',
       (%(locations)s::uuid[])[1 + g %% cardinality(%(locations)s::uuid[])], '[]',
       CASE WHEN g %% 7 = 0 THEN '["Do you deliver?"]'::jsonb ELSE '[]'::jsonb END, '{}',
       '{"detector_version": null, "counts": {}, "recording_withheld": false}'
  FROM generate_series(1, %(count)s) AS g,
       LATERAL (SELECT now() - make_interval(secs => ((%(offset)s + g) * 2654435761::bigint %% (365 * 86400))::float8)
               AS at) s
"""


# Many nodes completing one organization's calls at once (3.): WRITERS processes of a connection each, each starting a
# call (the runtime's INSERT, committed) and completing it (the UPDATE of its completion, committed) every PACE_SECONDS
# on average, at a location drawn at random, so every writer's completion lands on today's keys of the organization. A
# completion's transaction is the call's UPDATE and its event's INSERT. Paced, not as fast as possible: on a shared
# machine of 2 cores, 16 writers flat out would measure the CPU queue, not the row locks.
WRITERS = 16
COMPLETIONS = int(os.environ.get("BENCH_ANALYTICS_COMPLETIONS", 100))  # per round: one writer's (16 write a third)
WRITER_ROUNDS = 3
PACE_SECONDS = 0.1
WRITER_APP = "bench.analytics writer"
START_SQL = """
INSERT INTO calls_call (id, organization_id, created_at, updated_at, runtime_call_id, status, started_at, direction,
                        from_number, scorable, outcome_tags, trail, transcript, quality_checks, facts_used,
                        unanswered_questions, fields, redaction, location_id)
VALUES (gen_random_uuid(), %(org)s, now(), now(), %(runtime_call_id)s, 'in_progress', now(), 'inbound', '+14155550100',
        false, '[]', '[]', '[]', '[]', '[]', '[]', '{}',
        '{"detector_version": null, "counts": {}, "recording_withheld": false}', %(location)s)
RETURNING id
"""
COMPLETE_SQL = """
UPDATE calls_call SET status = 'completed', updated_at = now(), ended_at = now(), duration_seconds = %(duration)s,
       disposition = 'completed', classification = 'real_engagement', scorable = true, score = %(score)s,
       summary = 'Bench call', outcome = %(outcome)s
 WHERE id = %(id)s
"""
# The completion's `call.ended` event, written in its transaction as webhooks.services.emit writes it (the org has no
# subscriptions, so no delivery rows): what the transaction does after the call's UPDATE, holding what it locked.
EVENT_SQL = """
INSERT INTO webhooks_event (id, type, api_version, created_at, payload, organization_id, call_id, location_id)
VALUES ('evt_' || replace(gen_random_uuid()::text, '-', ''), 'call.ended', '1', now(), %(payload)s, %(org)s, %(id)s,
        %(location)s)
"""
PAYLOAD = b'{"type": "call.ended", "data": {' + b'"summary": "' + b"x" * 900 + b'"}}'


def _database_url() -> str:
    server = urlsplit(os.environ["DATABASE_URL"])
    with psycopg.connect(urlunsplit(server._replace(path="/postgres")), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]).fetchone():
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
    return urlunsplit(server._replace(path=f"/{DATABASE}"))


def _seed_calls(org, locations: list, count: int) -> None:
    from django.db import connection, transaction

    from calls.models import Call

    have = Call.objects.filter(organization=org).count()
    if have >= count:
        return
    begin = time.perf_counter()
    while have < count:
        chunk = min(CHUNK, count - have)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(SEED_SQL, {"org": org.pk, "offset": have, "count": chunk,
                                      "locations": [str(pk) for pk in locations] or [None]})
        have += chunk
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE calls_call; ANALYZE calls_callrollup")
    seconds = time.perf_counter() - begin
    print(f"  seeded {count:,} calls for {org.name} through the rollup triggers in {seconds:.0f} s "
          f"({count / seconds:,.0f} calls/s in statements of {CHUNK:,})", flush=True)


def _seed():
    from knowledge.services import location_create
    from orgs.models import Organization
    from orgs.services import api_key_create, organization_create

    org = Organization.objects.filter(name=ORG).first()
    if org is None:
        org, _ = organization_create(name=ORG, admin_email="analytics@bench.example", admin_password=None)
        for n, zone in enumerate(["America/Los_Angeles", "America/Los_Angeles", "America/Denver", "America/Chicago"]):
            location_create(org=org, name=f"Store {n + 1}", address=f"{n + 1} Main St", timezone=zone,
                            phone_number=f"+1310555010{n}")
        Organization.objects.filter(pk=org.pk).update(time_zone="America/Los_Angeles")
        other, _ = organization_create(name=f"{ORG} (other)", admin_email="analytics-other@bench.example",
                                       admin_password=None)
    org.refresh_from_db()
    other = Organization.objects.get(name=f"{ORG} (other)")
    from orgs.models import Location

    locations = list(Location.objects.filter(organization=org).order_by("name").values_list("pk", flat=True))
    _seed_calls(org, locations, CALLS)
    _seed_calls(other, [], OTHER_CALLS)
    admin = org.memberships.get().user
    _, plaintext = api_key_create(org=org, created_by=admin, name=f"bench {int(time.time())}", scope="read")
    return org, other, locations, plaintext


def _ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def _load() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def _writer(url: str, org_id, locations: list, run: str, number: int, each: int, ready, results) -> None:
    """One node's writer (its own process, as a node is: writers in threads of one process would queue on its GIL,
    and the wait for it would be counted in their completions' latencies): `each` calls started and completed, the
    completions' latencies put on `results`."""
    rng = random.Random(number)
    latencies = []
    with psycopg.connect(url, autocommit=True, application_name=WRITER_APP) as conn:
        ready.wait()
        for n in range(each):
            with conn.transaction():
                location = rng.choice(locations)
                [call_id] = conn.execute(START_SQL, {"org": org_id, "location": location,
                                                     "runtime_call_id": f"bench-w-{run}-{number}-{n}"}).fetchone()
            time.sleep(rng.uniform(0, PACE_SECONDS))
            begin = time.perf_counter()
            with conn.transaction():
                conn.execute(COMPLETE_SQL, {"id": call_id, "duration": rng.randrange(30, 600),
                                            "score": rng.randrange(101),
                                            "outcome": rng.choice(["order", "booking", "question", "message"])})
                conn.execute(EVENT_SQL, {"id": call_id, "org": org_id, "location": location, "payload": PAYLOAD})
            latencies.append(time.perf_counter() - begin)
            time.sleep(rng.uniform(0, PACE_SECONDS))
    results.put(latencies)


def _completions(url: str, org_id, locations: list, writers: int, each: int) -> dict:
    """`writers` processes completing the org's calls at once (WRITERS above): the completions' latencies, and what
    the writers' backends were doing while they ran (pg_stat_activity sampled every few ms, as `type:event`:
    `Lock:transactionid` is a wait for another transaction to commit, as on the rollup's hot row; `IO:WALSync` and
    `LWLock:WALWrite` are a commit's flush and the wait for another's)."""
    run = uuid.uuid4().hex[:8]
    waits: dict[str, int] = {}
    context = multiprocessing.get_context("fork")
    ready = context.Barrier(writers + 1)  # the writers and this process
    results = context.Queue()
    done = threading.Event()

    def sampler() -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            while not done.is_set():
                for (kind,) in conn.execute("SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') "
                                            "FROM pg_stat_activity "
                                            "WHERE application_name = %s AND state = 'active'", [WRITER_APP]):
                    waits[kind] = waits.get(kind, 0) + 1
                time.sleep(0.005)

    processes = [context.Process(target=_writer, args=(url, org_id, locations, run, number, each, ready, results))
                 for number in range(writers)]
    for process in processes:
        process.start()
    watcher = threading.Thread(target=sampler)
    watcher.start()
    ready.wait()
    begin = time.perf_counter()
    latencies: list[float] = [took for _ in processes for took in results.get(timeout=600)]
    seconds = time.perf_counter() - begin
    for process in processes:
        process.join()
    done.set()
    watcher.join()
    with psycopg.connect(url) as conn:  # the calls and events go, and their figures with them
        conn.execute("DELETE FROM webhooks_event WHERE call_id IN (SELECT id FROM calls_call "
                     "WHERE organization_id = %s AND runtime_call_id LIKE %s)", [org_id, f"bench-w-{run}-%"])
        conn.execute("DELETE FROM calls_call WHERE organization_id = %s AND runtime_call_id LIKE %s",
                     [org_id, f"bench-w-{run}-%"])
    return {"latencies": latencies, "seconds": seconds, "waits": waits}


def _pooled(runs: list[dict]) -> dict:
    """The rounds' completions as one sample, and the share of the writers' sampled active time in each wait."""
    waits: dict[str, int] = {}
    for run in runs:
        for kind, count in run["waits"].items():
            waits[kind] = waits.get(kind, 0) + count
    sampled = sum(waits.values()) or 1
    return {"latencies": [took for run in runs for took in run["latencies"]],
            "seconds": sum(run["seconds"] for run in runs),
            "lock_share": sum(count for kind, count in waits.items() if kind.startswith("Lock:")) / sampled,
            "waits": {kind: count / sampled for kind, count in sorted(waits.items(), key=lambda item: -item[1])}}


def main():
    os.environ["DATABASE_URL"] = _database_url()
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    os.environ.setdefault("RATE_LIMIT_READS_PER_MINUTE", "1000000000")
    os.environ.setdefault("RATE_LIMIT_WRITES_PER_MINUTE", "1000000000")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from datetime import timedelta

    from django.core.management import call_command
    from django.db import connection, transaction
    from rest_framework.test import APIClient

    from calls.analytics import local_today
    from calls.models import CallRollup, CallRollupDelta
    from calls.services.rollup import rollup_fold

    call_command("migrate", verbosity=0)
    org, other, locations, plaintext = _seed()
    rollup_fold()  # the reads below are the steady state's: what an earlier run left is folded, as beat would
    with connection.cursor() as cursor:
        # And vacuumed, as autovacuum would have since (it is off on this machine's server): the seeding's and earlier
        # runs' dead row versions would otherwise slow every read of the rollup below (docs/benchmarks.md).
        cursor.execute("VACUUM (ANALYZE) calls_callrollupfolded, calls_callrollupdelta, calls_callfieldrollupfolded, "
                       "calls_callfieldrollupdelta")
    client = APIClient(SERVER_NAME="127.0.0.1")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    until = local_today(org)
    year = {"since": (until - timedelta(days=364)).isoformat(), "until": until.isoformat()}
    rows = CallRollup.objects.filter(organization=org, day__gte=year["since"]).count()
    print(f"GET /v1/analytics/calls, the last 365 days of {CALLS:,} calls ({rows:,} rollup rows), {ROUNDS} rounds")
    results = {}
    cases = [(group_by, {**year, "group_by": group_by}) for group_by in ("day", "week", "location", "outcome")]
    cases.append(("day, one location", {**year, "group_by": "day", "location_id": str(locations[0])}))
    for label, params in cases:
        response = client.get("/v1/analytics/calls", params)
        assert response.status_code == 200, response.content
        total = response.json()["data"]["totals"]["calls"]
        samples = []
        for _ in range(ROUNDS):
            begin = time.perf_counter()
            client.get("/v1/analytics/calls", params)
            samples.append(time.perf_counter() - begin)
        results[label] = _ms(samples, 0.5)
        print(f"  group_by={label:20} {total:>9,} calls   p50 {results[label]:6.2f} ms   "
              f"p99 {_ms(samples, 0.99):6.2f} ms", flush=True)

    # One call written as the runtime does (an INSERT, then the completion's UPDATE), with and without the triggers:
    # what the rollup adds to each call write. Each write is rolled back to a savepoint; the triggers are disabled once
    # per batch (ALTER TABLE in a transaction that is rolled back), not around each write: that threw away the plans
    # a connection keeps for the triggers' statements, so every write measured "with" them planned them afresh, which
    # no long-lived connection does: most of what it measured was that planning (docs/benchmarks.md, issue 38).
    @contextlib.contextmanager
    def rolled_back(triggers: bool):
        """A cursor in a transaction that is rolled back, with the calls' triggers on or off for its length."""
        with transaction.atomic(), connection.cursor() as cursor:
            if not triggers:
                cursor.execute("ALTER TABLE calls_call DISABLE TRIGGER USER")
            yield cursor
            transaction.set_rollback(True)

    def some_writes(enabled: bool, count: int) -> list[float]:
        samples = []
        with rolled_back(enabled) as cursor:
            for _ in range(count):
                savepoint = transaction.savepoint()
                begin = time.perf_counter()
                cursor.execute(SEED_SQL, {"org": org.pk, "offset": 10 * CALLS, "count": 1,
                                          "locations": [str(pk) for pk in locations]})
                cursor.execute("UPDATE calls_call SET outcome = 'order', score = 90 WHERE organization_id = %s "
                               "AND runtime_call_id = %s", [org.pk, f"bench-{10 * CALLS + 1}"])
                samples.append(time.perf_counter() - begin)
                transaction.savepoint_rollback(savepoint)
        return samples

    some_writes(True, 3)  # the connection plans the triggers' statements once, as a serving connection has
    writes = {True: [], False: []}
    for enabled in (True, False, True, False):
        writes[enabled] += some_writes(enabled, ROUNDS // 2)
    off, on = _ms(writes[False], 0.5), _ms(writes[True], 0.5)
    print(f"one call's insert + completion update: p50 {off:.2f} ms without the triggers, {on:.2f} ms with them: "
          f"{on - off:.2f} ms per call ({_load()})")

    # A statement that moves many calls at once (a location's deletion sets its calls' location to null): 5,000
    # calls' scores, with and without the triggers, each rolled back; after the single-call writes above, so the
    # connection's plans are the ones it made for one call (calls 0021).
    def bulk_update(enabled: bool) -> float:
        with rolled_back(enabled) as cursor:
            begin = time.perf_counter()
            cursor.execute("UPDATE calls_call SET score = 1 + coalesce(score, 0) %% 50 WHERE id IN "
                           "(SELECT id FROM calls_call WHERE organization_id = %s LIMIT 5000)", [org.pk])
            return (time.perf_counter() - begin) * 1000

    bulk = {True: [], False: []}
    for enabled in (True, False, True, False):
        bulk[enabled].append(bulk_update(enabled))
    print(f"one statement updating 5,000 calls' scores: {min(bulk[True]):.0f} ms with the triggers, "
          f"{min(bulk[False]):.0f} ms without ({_load()})")

    # One writer, then 16, in alternating rounds: this machine's speed drifts within minutes, and a figure taken in
    # one stretch would compare two different machines.
    url = os.environ["DATABASE_URL"]
    ids = [str(pk) for pk in locations]
    runs = {1: [], WRITERS: []}
    for _ in range(WRITER_ROUNDS):
        for writers in runs:
            runs[writers].append(_completions(url, org.pk, ids, writers, COMPLETIONS // (1 if writers == 1 else 3)))
    alone, together = (_pooled(runs[1]), _pooled(runs[WRITERS]))
    for label, run in ((f"{1:2} writer ", alone), (f"{WRITERS:2} writers", together)):
        print(f"completions of one org, {label}: {len(run['latencies']):5} in {run['seconds']:4.1f} s   "
              f"p50 {_ms(run['latencies'], 0.5):6.2f} ms   p90 {_ms(run['latencies'], 0.9):6.2f} ms   "
              f"p99 {_ms(run['latencies'], 0.99):6.2f} ms   "
              f"waiting on a lock {run['lock_share']:4.0%} of the writers' active time "
              f"({', '.join(f'{kind} {share:.0%}' for kind, share in list(run['waits'].items())[:4])}) ({_load()})",
              flush=True)
    ratio = _ms(together["latencies"], 0.99) / _ms(alone["latencies"], 0.99)
    ratio_p90 = _ms(together["latencies"], 0.9) / _ms(alone["latencies"], 0.9)

    # What the rounds above appended (and their clean-up subtracted), read before the fold and then folded.
    pending = CallRollupDelta.objects.count()
    samples = []
    for _ in range(ROUNDS // 4):
        begin = time.perf_counter()
        client.get("/v1/analytics/calls", {**year, "group_by": "day"})
        samples.append(time.perf_counter() - begin)
    begin = time.perf_counter()
    moved = rollup_fold()
    folding = time.perf_counter() - begin
    print(f"group_by=day with {pending:,} deltas not folded yet: p50 {_ms(samples, 0.5):.2f} ms; "
          f"the fold of {moved:,} deltas: {folding * 1000:.0f} ms ({_load()})")

    with transaction.atomic():
        begin = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute("SELECT calls_rollup_rebuild(%s)", [org.pk])
        rebuild = time.perf_counter() - begin
        transaction.set_rollback(True)
    print(f"a time zone change's rebuild of the org's rollup ({CALLS:,} calls): {rebuild:.1f} s")
    worst = max(results.values())
    print(f"goal: p50 < 50 ms for a year of {CALLS:,} calls: worst {worst:.1f} ms {'OK' if worst < 50 else 'MISSED'}")
    print(f"goal: completions' p99 with {WRITERS} writers within 2x of one writer's: {ratio:.2f}x "
          f"{'OK' if ratio <= 2 else 'MISSED'} (p90: {ratio_p90:.2f}x); the triggers' cost per call < 2 ms: "
          f"{on - off:.2f} ms "
          f"{'OK' if on - off < 2 else 'MISSED'}")


if __name__ == "__main__":
    main()
