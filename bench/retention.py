"""Retention and erasure (docs/privacy.md#retention-and-erasure), on PostgreSQL:

1. The daily purge over BENCH_RETENTION_CALLS calls (default 1,000,000) of which BENCH_RETENTION_DUE (default 30%)
   are past the organization's transcripts' days, each with its `call.ended` event as a completion stores it (the
   purge rewrites those bodies into tombstones and emits a `call.content_deleted` per call): rows per second, the
   purge running as production runs it (`manage.py purge_expired_content --org`, its own process), and the runtime's
   `POST .../complete` p99 measured meanwhile against the same without the purge, BENCH_RETENTION_COMPLETIONS right
   before it and as many right after (goal: within 20%). The due calls end a day before the cutoff, so none
   becomes due while the bench runs and a second run deletes nothing.
2. The erasure of a caller with BENCH_ERASURE_CALLS (1,000) calls among 50,000 others, their events too: from the
   request to `completed` (goal: under 60 s).

Each figure carries the machine's load averages (1, 5 min) at its end: the machine may be shared.

Runs in a `voiceagent_bench_retention` database (BENCH_RETENTION_DB) on DATABASE_URL's server, seeded afresh each
run (the purge consumes its seed). On a small machine set BENCH_RETENTION_CALLS lower; the figures say which size
they are for.
"""

import os
import subprocess
import sys
import threading
import time
import uuid
from datetime import timedelta
from pathlib import Path

from bench.api_reads import _database_url

ROOT = Path(__file__).resolve().parent.parent
CALLS = int(os.environ.get("BENCH_RETENTION_CALLS", 1_000_000))
DUE = float(os.environ.get("BENCH_RETENTION_DUE", 0.3))
ERASURE_CALLS = int(os.environ.get("BENCH_ERASURE_CALLS", 1000))
TRANSCRIPTS_DAYS = 365
BASELINE_COMPLETIONS = int(os.environ.get("BENCH_RETENTION_COMPLETIONS", 300))
CALLER = "+14155550166"
TRANSCRIPT = [
    {"speaker": "agent", "text": "Thanks for calling, how can I help?", "offset_seconds": 0},
    {"speaker": "caller", "text": "I'd like two pepperoni pizzas for pickup, my name is Jordan.", "offset_seconds": 3},
    {"speaker": "agent", "text": "They will be ready in about 25 minutes.", "offset_seconds": 9},
]


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"[load {one:.1f}, {five:.1f}]"


def _seed(org_name: str):
    from django.db import connection
    from django.utils import timezone

    from orgs.models import Organization
    from orgs.services import organization_create
    from privacy.services import retention_update
    from tests.support.bulk_calls import insert_calls

    Organization.objects.filter(name__startswith=org_name).delete()
    org, _ = organization_create(name=org_name, admin_email=f"{uuid.uuid4().hex[:8]}@bench.example",
                                 admin_password=None)
    retention_update(org=org, recordings_days=None, transcripts_days=TRANSCRIPTS_DAYS)
    due = int(CALLS * DUE)
    started = time.perf_counter()
    content = {"transcript": TRANSCRIPT, "caller_name": "Jordan", "unanswered_questions": ["Is the patio heated?"],
               "quality_checks": [{"name": "Ready time", "verdict": "pass", "evidence": ["about 25 minutes"],
                                   "gap_type": None, "verification": "verified"}]}
    insert_calls(org.pk, CALLS - due, newest=timezone.now(), **content)
    insert_calls(org.pk, due, newest=_cutoff() - timedelta(days=1), **content)
    _insert_events(org)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE calls_call")
        cursor.execute("VACUUM ANALYZE webhooks_event")
    print(f"  seeded {CALLS:,} calls and their call.ended events in {time.perf_counter() - started:.0f} s {_load()}",
          flush=True)
    return org


def _insert_events(org, where: str = "TRUE") -> None:
    """One `call.ended` event per call of the org (`where` over `c`), its body the one the completion would store:
    one call's real envelope with its ids replaced, in one INSERT ... SELECT."""
    from django.db import connection

    from calls.models import Call
    from calls.payloads import call_ended_data
    from webhooks.models import API_VERSION
    from webhooks.services import envelope_bytes

    call = Call.objects.filter(organization=org).first()
    template = envelope_bytes(event_id="evt_TEMPLATE", type="call.ended", created_at=call.ended_at,
                              data=call_ended_data(call, None)).decode()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO webhooks_event (id, organization_id, type, api_version, created_at, payload, call_id,"  # noqa: S608 - the bench's own condition
            " location_id) SELECT 'evt_' || replace(c.id::text, '-', ''), c.organization_id, 'call.ended', %s,"
            " c.ended_at, convert_to(replace(replace(%s, %s, c.id::text), 'evt_TEMPLATE',"
            f" 'evt_' || replace(c.id::text, '-', '')), 'UTF8'), c.id, c.location_id FROM calls_call c"
            f" WHERE c.organization_id = %s AND {where}",
            [API_VERSION, template, str(call.pk), org.pk])


def _completions(org, stop: threading.Event | None, count: int) -> list[float]:
    """Runtime call starts and completions in a loop (through the real view and token check): each completion's
    seconds. Until `stop` is set, or `count` of them."""
    from django.conf import settings
    from django.db import close_old_connections
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {settings.AGENT_RUNTIME_TOKEN}")
    prefix = f"/internal/agent/v1/orgs/{org.pk}/calls"
    samples = []
    while (stop is None and len(samples) < count) or (stop is not None and not stop.is_set()):
        call_id = f"bench-{uuid.uuid4().hex}"
        client.post(prefix, {"call_id": call_id, "started_at": "2026-11-20T12:00:00Z",
                             "from_number": "+14155550100"}, format="json")
        body = {"ended_at": "2026-11-20T12:01:35Z", "classification": "real_engagement", "summary": "A question.",
                "outcome": "info", "transcript": TRANSCRIPT, "quality_checks": []}
        started = time.perf_counter()
        response = client.post(f"{prefix}/{call_id}/complete", body, format="json")
        samples.append(time.perf_counter() - started)
        assert response.status_code in (200, 201), response.content
    close_old_connections()
    return samples


def _purge(org):
    return subprocess.run([sys.executable, "manage.py", "purge_expired_content", "--org", str(org.pk)],  # noqa: S603
                          cwd=ROOT, env={**os.environ, "DJANGO_SETTINGS_MODULE": "bench.settings"},
                          capture_output=True, text=True)


def _purge_bench(org):
    from calls.models import Call
    from webhooks.models import Event

    due = Call.objects.filter(organization=org, content_deleted_at__isnull=True,
                              started_at__lt=_cutoff()).count()
    before = _completions(org, None, BASELINE_COMPLETIONS)
    before_load = _load()
    stop = threading.Event()
    during: list[float] = []
    worker = threading.Thread(target=lambda: during.extend(_completions(org, stop, 0)))
    worker.start()
    started = time.perf_counter()
    done = _purge(org)
    elapsed = time.perf_counter() - started
    stop.set()
    worker.join()
    during_load = _load()
    assert done.returncode == 0, done.stderr
    after = _completions(org, None, BASELINE_COMPLETIONS)
    after_load = _load()
    deleted = Call.objects.filter(organization=org, content_deleted_reason="retention").count()
    tombstones = Event.objects.filter(organization=org, type="call.content_deleted").count()
    print(f"  purge: {deleted:,} of {CALLS:,} calls ({due:,} due; {tombstones:,} call.content_deleted events, as many "
          f"call.ended bodies made tombstones) in {elapsed:.1f} s: {deleted / elapsed:,.0f} calls/s {during_load}",
          flush=True)
    without = before + after
    base_p99, during_p99 = _p(without, 0.99), _p(during, 0.99)
    print(f"  complete without the purge: p50 {_p(without, 0.5):.1f} ms, p99 {base_p99:.1f} ms ({len(without)}: "
          f"before p99 {_p(before, 0.99):.1f} ms {before_load}, after p99 {_p(after, 0.99):.1f} ms {after_load})",
          flush=True)
    print(f"  complete during the purge: p50 {_p(during, 0.5):.1f} ms, p99 {during_p99:.1f} ms ({len(during)}): "
          f"{(during_p99 / base_p99 - 1) * 100:+.0f}% (goal: within +20%) {during_load}", flush=True)
    rerun = _purge(org)
    print(f"  a second run: {rerun.stdout.strip().splitlines()[-1]}", flush=True)


def _cutoff():
    from django.utils import timezone

    return timezone.now() - timedelta(days=TRANSCRIPTS_DAYS)


def _erasure_bench():
    from django.utils import timezone

    from contacts.models import Contact
    from orgs.models import Organization
    from orgs.services import organization_create
    from privacy.services import erasure_request_create, erasure_run
    from tests.support.bulk_calls import insert_calls

    name = "Retention Bench Erasure"
    Organization.objects.filter(name=name).delete()
    org, _ = organization_create(name=name, admin_email=f"{uuid.uuid4().hex[:8]}@bench.example", admin_password=None)
    insert_calls(org.pk, 50_000, newest=timezone.now(), transcript=TRANSCRIPT, from_number="+14155550100")
    insert_calls(org.pk, ERASURE_CALLS, newest=timezone.now(), transcript=TRANSCRIPT, from_number=CALLER)
    _insert_events(org)
    Contact.objects.create(organization=org, phone_number=CALLER, phone_digits=CALLER[1:], name="Jordan",
                           source="inbound_call")
    started = time.perf_counter()
    request = erasure_request_create(org=org, phone_number=CALLER, suppress=True)
    request = erasure_run(request_id=request.pk)
    elapsed = time.perf_counter() - started
    print(f"  erasure of a caller with {request.counts['calls']:,} calls (beside 50,000 others, each call with its "
          f"event): {elapsed:.1f} s (goal: under 60 s), status {request.status} {_load()}", flush=True)


def main():
    os.environ["DATABASE_URL"] = _database_url(os.environ.get("BENCH_RETENTION_DB", "voiceagent_bench_retention"))
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    print(f"retention: {CALLS:,} calls, {DUE:.0%} due {_load()}", flush=True)
    org = _seed("Retention Bench")
    _purge_bench(org)
    _erasure_bench()
