"""The audit trail's cost, measured in process (Django's test client, no HTTP server) on PostgreSQL:
1. `PATCH /v1/calls/{id}/order-status` and `POST /v1/contacts` with the audit on and off (AUDIT_ENABLED), rounds
   interleaved so drift hits both alike: p50 each and the ratio; goal under 10% more time per request.
2. `GET /v1/audit-events?limit=50` for an org with 1,000,000 entries (another org holds 200,000 more): newest
   page, a page deep in by cursor, and an `action` prefix filter; goal p50 < 20 ms.
Runs in a `voiceagent_bench_audit` database on DATABASE_URL's server; the seeded entries are kept between runs.
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
ENTRIES = 1_000_000
OTHER_ENTRIES = 200_000
ORDERS = 200
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 6))
ORG = "Audit Bench Org"

SEED_SQL = """
INSERT INTO audit_event (id, organization_id, occurred_at, action, actor_type, actor_id, actor_label, target_type,
                         target_id, target_label, changes, ip, user_agent, request_id, chain_seq, prev_hash, hash)
SELECT gen_random_uuid(), %(org)s, now() - make_interval(secs => g * 30),
       (ARRAY['order.status_changed', 'api_key.created', 'webhook_subscription.updated', 'fact.updated'])[1 + g %% 4],
       'user', 'user-' || (g %% 50), 'someone@bench.example', 'order', gen_random_uuid()::text, 'Order #' || g,
       '{"status": ["new", "in_progress"]}', '203.0.113.7', 'bench/1.0', 'req_' || g,
       %(base)s + %(count)s - g + 1, encode(sha256(int8send(g + 1)), 'hex'), encode(sha256(int8send(g)), 'hex')
  FROM generate_series(1, %(count)s) AS g
"""


def _database_url() -> str:
    server = urlsplit(os.environ["DATABASE_URL"])
    with psycopg.connect(urlunsplit(server._replace(path="/postgres")), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'voiceagent_bench_audit'").fetchone():
            conn.execute("CREATE DATABASE voiceagent_bench_audit")
    return urlunsplit(server._replace(path="/voiceagent_bench_audit"))


def _seed_entries(org_id, count: int) -> None:
    """`count` sealed-looking entries for the org, oldest 30 s apart (their hashes are filler: nothing verifies
    them here), and the chain's head after them, so new entries seal on top."""
    from django.db import connection

    from audit.models import AuditChain, AuditEvent

    have = AuditEvent.objects.filter(organization_id=org_id).count()
    if have >= count:
        return
    with connection.cursor() as cursor:
        cursor.execute(SEED_SQL, {"org": org_id, "count": count - have, "base": have})
        cursor.execute("ANALYZE audit_event")
    AuditChain.objects.update_or_create(organization_id=org_id, defaults={"last_seq": count})
    print(f"  seeded {count - have:,} entries for {org_id}", flush=True)


def _seed():
    from datetime import timedelta

    from django.utils import timezone

    from calls.models import Call, Order
    from orgs.models import Organization
    from orgs.services import api_key_create, organization_create

    org = Organization.objects.filter(name=ORG).first()
    if org is None:
        org, _ = organization_create(name=ORG, admin_email="audit@bench.example", admin_password=None)
        organization_create(name=f"{ORG} (other)", admin_email="audit-other@bench.example", admin_password=None)
    other = Organization.objects.get(name=f"{ORG} (other)")
    _seed_entries(org.pk, ENTRIES)
    _seed_entries(other.pk, OTHER_ENTRIES)
    now = timezone.now()
    if Call.objects.for_org(org).count() < ORDERS:
        calls = Call.objects.bulk_create([Call(
            organization=org, runtime_call_id=f"audit-order-{i}", status="completed",
            started_at=now - timedelta(days=1, minutes=i), outcome="order", from_number="+14155550100",
        ) for i in range(ORDERS)])
        Order.objects.bulk_create([Order(
            organization=org, call=call, call_order_number=900_000 + i, profile_id=call.id,
            profile_name="Phone orders", items=[], subtotal_cents=1000, total_cents=1000,
            fulfillment_estimate_value=20, fulfillment_estimate_unit="minutes", expected_fulfillment_at=now,
            cancellation_window_value=5, cancellation_window_unit="minutes", cancellation_deadline_at=now,
            placed_at=now,
        ) for i, call in enumerate(calls)])
    admin = org.memberships.get().user
    _, plaintext = api_key_create(org=org, created_by=admin, name=f"bench {int(time.time())}",
                                  scope="read_write_audit")
    return org, plaintext


def _p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main():
    os.environ["DATABASE_URL"] = _database_url()
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    os.environ.setdefault("RATE_LIMIT_READS_PER_MINUTE", "1000000000")
    os.environ.setdefault("RATE_LIMIT_WRITES_PER_MINUTE", "1000000000")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from rest_framework.test import APIClient

    from calls.models import Call, Order

    call_command("migrate", verbosity=0)
    org, plaintext = _seed()
    client = APIClient(SERVER_NAME="127.0.0.1")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    call_ids = [str(pk) for pk in Call.objects.for_org(org).filter(runtime_call_id__startswith="audit-order-")
                .values_list("pk", flat=True)]
    rng = random.Random()

    def patch_orders() -> list[float]:
        Order.objects.filter(call_id__in=call_ids).update(status="new", canceled_at=None, canceled_by=None)
        samples = []
        for call_id in call_ids:
            begin = time.perf_counter()
            response = client.patch(f"/v1/calls/{call_id}/order-status", {"status": "in_progress"}, format="json")
            samples.append(time.perf_counter() - begin)
            assert response.status_code == 200, response.content
        return samples

    def post_contacts() -> list[float]:
        samples = []
        for _ in range(ORDERS):
            phone = f"+1415{rng.randint(2_000_000, 9_999_999)}"  # new each time, but for a rare clash (409)
            begin = time.perf_counter()
            response = client.post("/v1/contacts", {"phone_number": phone}, format="json")
            samples.append(time.perf_counter() - begin)
            assert response.status_code in (201, 409), response.content
        return samples

    print(f"Writes with the audit on and off, {ROUNDS} interleaved rounds of {ORDERS} requests each, in process")
    results = {}
    for name, run in (("PATCH /v1/calls/{id}/order-status", patch_orders), ("POST /v1/contacts", post_contacts)):
        samples = {True: [], False: []}
        run()  # warm
        for _ in range(ROUNDS):
            for enabled in (False, True):
                settings.AUDIT_ENABLED = enabled
                samples[enabled] += run()
        settings.AUDIT_ENABLED = True
        off, on = _p50(samples[False]), _p50(samples[True])
        results[name] = on / off
        print(f"  {name:36} off p50 {off:6.2f} ms   on p50 {on:6.2f} ms   {100 * (on / off - 1):+5.1f}%")

    def timed_get(params, rounds=100) -> float:
        client.get("/v1/audit-events", params)
        samples = []
        for _ in range(rounds):
            begin = time.perf_counter()
            response = client.get("/v1/audit-events", params)
            samples.append(time.perf_counter() - begin)
            assert response.status_code == 200, response.content
        return _p50(samples)

    deep = {"limit": 50}
    for _ in range(200):  # 10,000 entries in
        deep = {"limit": 50, "cursor": client.get("/v1/audit-events", deep).json()["next_cursor"]}
    print(f"GET /v1/audit-events, one org of {ENTRIES:,} entries (and another of {OTHER_ENTRIES:,}), 100 rounds each")
    lists = {
        "limit=50, newest": timed_get({"limit": 50}),
        "limit=50, 10,000 entries in (cursor)": timed_get(deep),
        "limit=50, action=order.": timed_get({"limit": 50, "action": "order."}),
    }
    for label, p50 in lists.items():
        print(f"  {label:40} p50 {p50:6.2f} ms")
    worst_write = max(results.values())
    print(f"goals: writes under 10% more with the audit: worst {100 * (worst_write - 1):+.1f}% "
          f"{'OK' if worst_write < 1.10 else 'MISSED'}; list p50 < 20 ms: worst {max(lists.values()):.1f} ms "
          f"{'OK' if max(lists.values()) < 20 else 'MISSED'}")


if __name__ == "__main__":
    main()
