"""Call search and the cost of Idempotency-Key, measured in process (Django's test client, no HTTP server) on
PostgreSQL, so the figures are the server's own work:
1. `GET /v1/calls?q=` over 100,000 calls (summary and a transcript each, words drawn from a 2,000-word vocabulary):
   p50 and p99 for a rare word, a common word, a phrase and a prefix; goal p50 < 20 ms.
2. `POST /v1/contacts` with and without `Idempotency-Key`: database round trips per request (counted) and p50.
Runs in a `voiceagent_bench_search` database on DATABASE_URL's server; the seeded calls are kept between runs.
"""

import os
import random
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
CALLS = 100_000
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 60))
ORG = "Search Bench Org"


def _database_url() -> str:
    server = urlsplit(os.environ["DATABASE_URL"])
    with psycopg.connect(urlunsplit(server._replace(path="/postgres")), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'voiceagent_bench_search'").fetchone():
            conn.execute("CREATE DATABASE voiceagent_bench_search")
    return urlunsplit(server._replace(path="/voiceagent_bench_search"))


def _seed():
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    from calls.models import Call
    from orgs.models import Organization
    from orgs.services import api_key_create, organization_create

    org = Organization.objects.filter(name=ORG).first()
    if org is None:
        org, _ = organization_create(name=ORG, admin_email="search@bench.example", admin_password=None)
    if Call.objects.for_org(org).count() < CALLS:
        Call.objects.for_org(org).delete()
        rng = random.Random(11)
        vocabulary = [f"w{n:04d}" for n in range(2000)] + ["pizza", "pepperoni", "delivery", "reservation"]
        now = timezone.now()
        batch = []
        for i in range(CALLS):
            words = rng.choices(vocabulary, k=30)
            started = now - timedelta(seconds=30 * i)
            batch.append(Call(
                organization=org, runtime_call_id=f"search-{i}", status="completed", started_at=started,
                ended_at=started + timedelta(seconds=90), duration_seconds=90, disposition="completed",
                classification="real_engagement", scorable=True, summary=" ".join(words[:8]), outcome="info",
                transcript=[{"speaker": "caller", "text": " ".join(words[8:19]), "offset_seconds": 1.0},
                            {"speaker": "agent", "text": " ".join(words[19:]), "offset_seconds": 5.0}],
            ))
            if len(batch) == 5000:
                Call.objects.bulk_create(batch)
                batch = []
        print(f"  seeded {CALLS:,} calls", flush=True)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    admin = org.memberships.get().user
    _, plaintext = api_key_create(org=org, created_by=admin, name=f"bench {int(time.time())}", scope="read_write")
    return plaintext


def _timed(fn, rounds=ROUNDS) -> dict:
    fn()  # warm
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return {"p50": statistics.median(samples), "p99": samples[min(len(samples) - 1, int(len(samples) * 0.99))]}


def main():
    os.environ["DATABASE_URL"] = _database_url()
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    os.environ.setdefault("RATE_LIMIT_READS_PER_MINUTE", "1000000000")
    os.environ.setdefault("RATE_LIMIT_WRITES_PER_MINUTE", "1000000000")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from rest_framework.test import APIClient

    call_command("migrate", verbosity=0)
    plaintext = _seed()
    client = APIClient(SERVER_NAME="127.0.0.1")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")

    def get(q):
        response = client.get("/v1/calls", {"q": q, "limit": 20})
        assert response.status_code == 200, response.content
        return response

    print(f"GET /v1/calls?q= over {CALLS:,} calls, {ROUNDS} rounds each, in process")
    print(f"{'query':36} {'matches on page':>16} {'p50 ms':>8} {'p99 ms':>8}")
    p50s = []
    for q in ["w0007", "pizza", '"w0001 w0002"', "pepp*", "w0003 w0004"]:
        hits = len(get(q).json()["data"])
        row = _timed(lambda q=q: get(q))
        p50s.append(row["p50"])
        print(f"{q:36} {hits:16d} {row['p50']:8.1f} {row['p99']:8.1f}")

    counter = iter(range(10**9))

    def create(with_key: bool):
        n = next(counter)
        headers = {"HTTP_IDEMPOTENCY_KEY": f"bench-{time.time_ns()}-{n}"} if with_key else {}
        response = client.post("/v1/contacts", {"phone_number": f"+1415{5000000 + n % 4000000:07d}"},
                               format="json", **headers)
        assert response.status_code in (201, 409), response.content

    rows = {}
    for with_key in (False, True):
        with CaptureQueriesContext(connection) as queries:
            create(with_key)
        rows[with_key] = (len(queries), _timed(lambda w=with_key: create(w)))
    print("POST /v1/contacts, database round trips per request and latency:")
    for with_key, (queries, timing) in rows.items():
        label = "with Idempotency-Key" if with_key else "without"
        print(f"  {label:22} {queries:3d} round trips   p50 {timing['p50']:.1f} ms   p99 {timing['p99']:.1f} ms")
    extra = rows[True][0] - rows[False][0]
    print(f"goals: q p50 < 20 ms: worst {max(p50s):.1f} {'OK' if max(p50s) < 20 else 'MISSED'}; "
          f"Idempotency-Key at most 1 extra round trip: {extra:+d} {'OK' if extra <= 1 else 'MISSED'}")


if __name__ == "__main__":
    main()
