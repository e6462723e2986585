"""The location scope's cost (docs/api.md#locations-and-scope), measured in process (Django's test client, no HTTP
server) on PostgreSQL, so the figures are the server's own work:
`GET /v1/calls?limit=50` over 10,000 calls of one organization, by a key of the whole organization (the newest 50 of
10,000) and by a key limited to one location (its 50 calls, spread over the whole history among the others'),
p50 and p99 of each; goal: the scoped p50 within 10% of the unscoped one. A key of two busy locations (about 4,000
calls) is shown beside them, and the same three for `GET /v1/contacts?limit=50` (each call's caller is a contact: a
scoped key sees those with a call at its locations).
Runs in a `voiceagent_bench_scope` database on DATABASE_URL's server; the seeded calls are kept between runs.
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
CALLS = 10_000
AT_L1 = 50
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 200))
ORG = "Scope Bench Org"


def _database_url() -> str:
    server = urlsplit(os.environ["DATABASE_URL"])
    with psycopg.connect(urlunsplit(server._replace(path="/postgres")), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'voiceagent_bench_scope'").fetchone():
            conn.execute("CREATE DATABASE voiceagent_bench_scope")
    return urlunsplit(server._replace(path="/voiceagent_bench_scope"))


def _seed():
    """The org, its 10,000 calls (50 at L1, evenly through its history; the rest over four other locations and
    none), and two keys: (whole organization, L1 only)."""
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    from calls.models import Call
    from contacts.models import Contact
    from knowledge.services import location_create
    from orgs.models import Location, Organization
    from orgs.services import api_key_create, organization_create

    org = Organization.objects.filter(name=ORG).first()
    if org is None:
        org, _ = organization_create(name=ORG, admin_email="scope@bench.example", admin_password=None)
    locations = list(Location.objects.for_org(org).order_by("name"))
    if len(locations) < 5:
        locations = [location_create(org=org, name=f"L{n}", timezone="UTC") for n in range(1, 6)]
    l1, others = locations[0], [*locations[1:], None]
    if Call.objects.for_org(org).count() != CALLS or Contact.objects.for_org(org).count() != CALLS:
        Call.objects.for_org(org).delete()
        Contact.objects.for_org(org).delete()
        rng = random.Random(5)
        now = timezone.now()
        contacts = Contact.objects.bulk_create([
            Contact(organization=org, phone_number=f"+1415{5000000 + i:07d}", phone_digits=f"1415{5000000 + i:07d}",
                    name=f"Caller {i}", source="inbound_call")
            for i in range(CALLS)
        ])
        batch = []
        for i in range(CALLS):
            started = now - timedelta(seconds=60 * i)
            location = l1 if i % (CALLS // AT_L1) == CALLS // AT_L1 - 1 else rng.choice(others)
            batch.append(Call(
                organization=org, runtime_call_id=f"scope-{i}", status="completed", started_at=started,
                ended_at=started + timedelta(seconds=90), duration_seconds=90, disposition="completed",
                classification="real_engagement", scorable=True, summary="A call", outcome="info", location=location,
                from_number=contacts[i].phone_number, contact=contacts[i],
            ))
        Call.objects.bulk_create(batch)
        print(f"  seeded {CALLS:,} calls and their callers, {AT_L1} at L1", flush=True)
        with connection.cursor() as cursor:
            # Not ANALYZE alone: a re-seed leaves the old rows dead in the location index's pages until vacuumed.
            cursor.execute("VACUUM ANALYZE calls_call, contacts_contact")
    admin = org.memberships.get().user
    stamp = int(time.time())
    whole = api_key_create(org=org, created_by=admin, name=f"bench whole {stamp}", scope="read")[1]
    scoped = api_key_create(org=org, created_by=admin, name=f"bench L1 {stamp}", scope="read",
                            location_ids=[l1.pk])[1]
    busy = api_key_create(org=org, created_by=admin, name=f"bench L2+L3 {stamp}", scope="read",
                          location_ids=[locations[1].pk, locations[2].pk])[1]
    return whole, scoped, busy


def main():
    os.environ["DATABASE_URL"] = _database_url()
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    os.environ.setdefault("RATE_LIMIT_READS_PER_MINUTE", "1000000000")
    os.environ.setdefault("RATE_LIMIT_ORG_READS_PER_MINUTE", "1000000000")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from rest_framework.test import APIClient

    call_command("migrate", verbosity=0)
    keys = _seed()
    clients = []
    for plaintext in keys:
        client = APIClient(SERVER_NAME="127.0.0.1")
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
        clients.append(client)

    for path, what in (("/v1/calls", "calls"), ("/v1/contacts", "contacts (each a caller of one call)")):
        rows = _compare(clients, path)
        print(f"GET {path}?limit=50 over {CALLS:,} {what}, {ROUNDS} rounds each (alternating), in process")
        for n, label in ((0, "whole organization"), (1, f"limited to L1 ({AT_L1} calls)"),
                         (2, "limited to L2 and L3 (about 4,000)")):
            print(f"  {label:34} p50 {rows[n][0]:6.2f} ms   p99 {rows[n][1]:6.2f} ms")
        ratio = rows[1][0] / rows[0][0]
        goal = f"{'OK' if ratio <= 1.10 else 'MISSED'}" if path == "/v1/calls" else "(no goal)"
        print(f"  scoped p50 / unscoped p50: {ratio:.2f}x {goal} (two busy locations: {rows[2][0] / rows[0][0]:.2f}x)")


def _compare(clients, path: str) -> dict:
    """(p50, p99) in ms per client of `GET path?limit=50`, the clients' requests alternating, so a slower moment of
    the shared machine falls on all of them."""

    def page(client):
        response = client.get(path, {"limit": 50})
        assert response.status_code == 200 and len(response.json()["data"]) == 50, response.content

    samples = {n: [] for n in range(len(clients))}
    for _ in range(10):
        for client in clients:
            page(client)
    for _ in range(ROUNDS):
        for n, client in enumerate(clients):
            started = time.perf_counter()
            page(client)
            samples[n].append((time.perf_counter() - started) * 1000)
    rows = {}
    for n, ordered in samples.items():
        ordered.sort()
        rows[n] = statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return rows


if __name__ == "__main__":
    main()
