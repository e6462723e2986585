"""API read throughput and latency under gunicorn (2 workers) on PostgreSQL, beside a bare Django JSON view.

Measures, in one run, against one gunicorn serving both the real API and `bench/bare` (bench/urls.py):
1. `GET /v1/me`, `GET /v1/calls?limit=50` over 10,000 calls, `GET /v1/contacts?search=...` over 100,000
   contacts: requests/s, p50 and p99, each as a ratio of the bare view's requests/s.
2. The time from `PATCH /v1/facts/{id}` answering 200 to the runtime's knowledge read showing the change.

The load comes from BENCH_CLIENTS processes (default 4) with keep-alive connections, BENCH_SECONDS (default 5)
per endpoint, on the same 2-core machine as the server: every figure shares that handicap, the ratios don't.
Runs in a `voiceagent_bench` database (created if missing) on the server of DATABASE_URL: `make bench` gives it
the embedded one when DATABASE_URL is unset.
The seeded rows (org "Bench Org") are kept between runs, so only the first run pays for seeding.
"""

import http.client
import json
import os
import random
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
SECONDS = float(os.environ.get("BENCH_SECONDS", 5))
CALLS = 10_000
CONTACTS = 100_000
BENCH_ORG = "Bench Org"
FIRST = ["Ada", "Ben", "Carla", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jon", "Kemi", "Liam", "Maya",
         "Noah", "Olga", "Pablo", "Quinn", "Rosa", "Sven", "Tara", "Uma", "Victor", "Wen", "Xavi", "Yara", "Zane"]
LAST = ["Smith", "Garcia", "Okafor", "Nguyen", "Kowalski", "Haddad", "Silva", "Tanaka", "Murphy", "Rossi",
        "Schmidt", "Dubois", "Ivanova", "Khan", "Lopez", "Brown", "Kim", "Novak", "Jensen", "Moreau"]


def _database_url() -> str:
    """The bench's own database on DATABASE_URL's server, so its 110,000 seeded rows stay out of the demo's."""
    server = urlsplit(os.environ["DATABASE_URL"])
    with psycopg.connect(urlunsplit(server._replace(path="/postgres")), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'voiceagent_bench'").fetchone():
            conn.execute("CREATE DATABASE voiceagent_bench")
    return urlunsplit(server._replace(path="/voiceagent_bench"))


def _seed():
    """The bench org with 10,000 calls and 100,000 contacts, bulk-inserted once; returns (org, key, fact)."""
    from datetime import timedelta

    from django.utils import timezone

    from calls.models import Call
    from contacts.models import Contact
    from orgs.models import Organization
    from orgs.services import api_key_create, fact_create, organization_create

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
    from orgs.models import Fact

    return Fact.objects.for_org(org).filter(label="Bench hours").first()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_gunicorn(env: dict, port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), "voiceagent.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "2",
         "--threads", "4", "--log-level", "warning"],
        cwd=ROOT, env=env,
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


def _load(port, paths, headers) -> dict:
    with Pool(CLIENTS) as pool:
        results = pool.map(_client, [(port, paths, headers, SECONDS, i) for i in range(CLIENTS)])
    latencies = sorted(latency for result in results for latency in result[0])
    errors = sum(result[1] for result in results)
    return {
        "rps": len(latencies) / SECONDS,
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
        "errors": errors,
    }


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


def main():
    org, plaintext, fact = prepare()
    database_url = os.environ["DATABASE_URL"]
    from django.conf import settings

    runtime_token = settings.AGENT_RUNTIME_TOKEN or "bench-runtime-token-0123456789-abcdefghijkl"  # >= 32: DEBUG is off
    port = _free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "bench.settings",
        "DATABASE_URL": database_url,
        "AGENT_RUNTIME_TOKEN": runtime_token,
        # The rate limiter still runs on every request; the bench just must not hit it.
        "RATE_LIMIT_READS_PER_MINUTE": "1000000000",
        "RATE_LIMIT_WRITES_PER_MINUTE": "1000000000",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
    }
    server = _start_gunicorn(env, port)
    auth = {"Authorization": f"Bearer {plaintext}"}
    searches = ["smith", "garcia", "ada", "elena", "4152001", "415 200 12", "okafor", "@example.com", "zane k"]
    try:
        _load(port, ["/bench/bare"], {})  # warm up both workers
        bare = _load(port, ["/bench/bare"], {})
        results = {
            "GET /v1/me": _load(port, ["/v1/me"], auth),
            "GET /v1/calls?limit=50 (10,000 calls)": _load(port, ["/v1/calls?limit=50"], auth),
            "GET /v1/contacts?search= (100,000 contacts)": _load(
                port, [f"/v1/contacts?search={term.replace(' ', '%20')}" for term in searches], auth
            ),
        }
        delays = _fact_visibility(port, org, plaintext, fact, runtime_token)
    finally:
        server.terminate()
        server.wait(timeout=10)

    print(f"gunicorn 2 workers x 4 threads, {CLIENTS} keep-alive client processes, {SECONDS:.0f} s each, "
          f"database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}")
    print(f"{'endpoint':48} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'vs bare':>8} {'errors':>7}")
    print(f"{'GET /bench/bare (ceiling)':48} {bare['rps']:8.0f} {bare['p50_ms']:8.1f} {bare['p99_ms']:8.1f} "
          f"{1:8.2f} {bare['errors']:7d}")
    for name, row in results.items():
        print(f"{name:48} {row['rps']:8.0f} {row['p50_ms']:8.1f} {row['p99_ms']:8.1f} "
              f"{row['rps'] / bare['rps']:8.2f} {row['errors']:7d}")
    print(f"fact change visible to the runtime after the PATCH answered: "
          f"p50 {1000 * statistics.median(delays):.1f} ms, max {1000 * max(delays):.1f} ms over {len(delays)} changes")
    me_ratio = results["GET /v1/me"]["rps"] / bare["rps"]
    search_p50 = results["GET /v1/contacts?search= (100,000 contacts)"]["p50_ms"]
    print(f"goals: /v1/me >= 0.6 of bare: {me_ratio:.2f} {'OK' if me_ratio >= 0.6 else 'MISSED'}; "
          f"contact search p50 < 20 ms: {search_p50:.1f} {'OK' if search_p50 < 20 else 'MISSED'}; "
          f"fact visible < 1 s: {max(delays):.3f} s {'OK' if max(delays) < 1 else 'MISSED'}")


if __name__ == "__main__":
    main()
