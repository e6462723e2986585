"""CSV exports of 1,000,000 calls under the project's gunicorn (gunicorn.conf.py): the time to the first byte (the
status line, the header row and the first call) of `GET /v1/exports/calls.csv` unfiltered, filtered on a time range,
and filtered on a location that holds 1% of the calls; goal under 1 s each. Then one whole download: its time, its
size and the rate. Runs in a `voiceagent_bench_exports` database on DATABASE_URL's server; the seeded calls are kept
between runs (the first run takes a few minutes to insert them). BENCH_EXPORT_CALLS seeds fewer (a loaded machine)
and BENCH_EXPORTS_DATABASE names another database (one per seed size, or per engineer on a shared server).
"""

import http.client
import os
import statistics
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlencode

import psycopg

from bench.api_reads import _database_url, _free_port, _start_gunicorn, _start_redis

ROOT = Path(__file__).resolve().parent.parent
CALLS = int(os.environ.get("BENCH_EXPORT_CALLS", 1_000_000))
AT_LOCATION = CALLS // 100
NEWEST = datetime(2026, 11, 20, tzinfo=UTC)
ORG = "Exports Bench Org"
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 5))
DATABASE = os.environ.get("BENCH_EXPORTS_DATABASE", "voiceagent_bench_exports")


def _seed():
    """The bench org with CALLS calls a second apart, every hundredth at one location; returns (location, key)."""
    from django.db import connection

    from calls.models import Call
    from knowledge.services import location_create
    from orgs.models import Location, Organization
    from orgs.services import api_key_create, organization_create
    from tests.support.bulk_calls import insert_calls

    org = Organization.objects.filter(name=ORG).first()
    if org is None:
        org, _ = organization_create(name=ORG, admin_email="exports@bench.example", admin_password=None)
        location_create(org=org, name="Uptown", address="1 Main St", timezone="UTC", phone_number="+12125550100")
    location = Location.objects.get(organization=org)
    have = Call.objects.filter(organization=org).count()
    if have < CALLS:
        started = time.perf_counter()
        insert_calls(org.pk, CALLS - have, newest=NEWEST - timedelta(seconds=have))
        with connection.cursor() as cursor:
            cursor.execute("UPDATE calls_call SET location_id = %s WHERE organization_id = %s "
                           "AND extract(epoch FROM started_at)::bigint %% 100 = 0", [location.pk, org.pk])
            cursor.execute("ANALYZE calls_call")
        print(f"  seeded {CALLS - have:,} calls in {time.perf_counter() - started:.0f} s", flush=True)
    admin = org.memberships.get().user
    _, plaintext = api_key_create(org=org, created_by=admin, name=f"bench {int(time.time())}", scope="read")
    return location, plaintext


def _get(port: int, path: str, key: str, timeout: float):
    """The response to GET `path`, with the clock started as the request left. The organization runs one export at
    a time (core/csvexport.py): the previous round's, hung up on, may still hold its place for a moment, so a 429 is
    asked again (and not timed)."""
    while True:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        started = time.perf_counter()
        conn.request("GET", path, headers={"Authorization": f"Bearer {key}"})
        response = conn.getresponse()
        if response.status != 429:
            break
        response.read()
        conn.close()
        time.sleep(0.05)
    assert response.status == 200, (response.status, response.read()[:500])
    return conn, response, started


def _first_byte(port: int, path: str, key: str) -> tuple[float, bytes]:
    """Seconds from sending the request to the first bytes of the body, and those bytes; then hangs up."""
    conn, response, started = _get(port, path, key, 120)
    first = response.read1(65536)
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed, first


def _whole(port: int, path: str, key: str) -> tuple[float, int, int]:
    conn, response, started = _get(port, path, key, 600)
    size = lines = 0
    while chunk := response.read1(1 << 20):
        size += len(chunk)
        lines += chunk.count(b"\r\n")
    conn.close()
    return time.perf_counter() - started, size, lines - 1


class _OldestSnapshot(threading.Thread):
    """Samples, every 0.2 s while the download runs, how long the database's oldest snapshot has been held (a
    backend with a backend_xmin: what keeps PostgreSQL from pruning any table of the database); `longest` is the
    longest seen, in seconds."""

    def __init__(self, database_url: str):
        super().__init__(daemon=True)
        self.database_url, self.longest, self.done = database_url, 0.0, threading.Event()

    def run(self):
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            while not self.done.wait(0.2):
                held = conn.execute(
                    "SELECT coalesce(max(extract(epoch FROM now() - xact_start)), 0) "
                    "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
                    "AND backend_xmin IS NOT NULL AND xact_start IS NOT NULL"
                ).fetchone()[0]
                self.longest = max(self.longest, float(held))


def main():
    os.environ["DATABASE_URL"] = _database_url(DATABASE)
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    os.environ.setdefault("RATE_LIMIT_READS_PER_MINUTE", "1000000000")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    location, key = _seed()
    port, redis_port = _free_port(), _free_port()
    redis = _start_redis(redis_port)
    env = {**os.environ, "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0", "ALLOWED_HOSTS": "127.0.0.1,localhost"}
    server = _start_gunicorn(env, port)
    back = min(timedelta(days=5), timedelta(seconds=CALLS) / 2)  # the day starts inside a smaller seed's span too
    cases = {
        f"all {CALLS:,} calls": "/v1/exports/calls.csv",
        "a day of them (since/until)": "/v1/exports/calls.csv?" + urlencode({
            "since": (NEWEST - back).isoformat(), "until": (NEWEST - back + timedelta(days=1)).isoformat()}),
        f"one location ({AT_LOCATION:,} calls)": f"/v1/exports/calls.csv?location_id={location.pk}",
    }
    try:
        _first_byte(port, "/v1/exports/calls.csv?since=2030-01-01T00:00:00Z", key)  # warm the workers' code paths
        _first_byte(port, "/v1/exports/calls.csv?since=2030-01-01T00:00:00Z", key)
        print(f"{'GET /v1/exports/calls.csv':40} {'first byte p50':>15} {'max':>8}   (goal < 1000 ms, {ROUNDS} rounds)")
        for name, path in cases.items():
            samples = []
            for _ in range(ROUNDS):
                elapsed, first = _first_byte(port, path, key)
                assert first.count(b"\r\n") >= 2, first[:300]  # the header and at least one call
                samples.append(elapsed * 1000)
            print(f"{name:40} {statistics.median(samples):12.0f} ms {max(samples):5.0f} ms", flush=True)
        oldest = _OldestSnapshot(os.environ["DATABASE_URL"])
        oldest.start()
        elapsed, size, rows = _whole(port, cases[f"all {CALLS:,} calls"], key)
        oldest.done.set()
        oldest.join()
        print(f"whole download: {rows:,} rows, {size / 1e6:.0f} MB in {elapsed:.1f} s ({rows / elapsed:,.0f} rows/s, "
              f"{size / elapsed / 1e6:.1f} MB/s); the database's oldest snapshot meanwhile: {oldest.longest:.1f} s")
        assert rows == CALLS
    finally:
        server.terminate()
        redis.terminate()
        server.wait(30)
        redis.wait(30)
