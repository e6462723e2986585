"""Retention and erasure (docs/privacy.md#retention-and-erasure), on PostgreSQL:

1. The daily purge over BENCH_RETENTION_CALLS calls (default 1,000,000) of which BENCH_RETENTION_DUE (default 30%)
   are past the organization's transcripts' days, each with its `call.ended` event as a completion stores it (the
   purge rewrites those bodies into tombstones and emits a `call.content_deleted` per call): rows per second, the
   purge running as production runs it (`manage.py purge_expired_content --org`, its own process, at the Procfile's
   maintenance priority: BENCH_RETENTION_NICE, 10; its settings from the environment, RETENTION_PURGE_PAUSE...),
   and the runtime's `POST .../complete` p99 while it runs against while it is paused, in alternating windows of
   BENCH_RETENTION_WINDOW seconds (5) over its first BENCH_RETENTION_WINDOWS (40) (goal: within 20%), and
   BENCH_RETENTION_COMPLETIONS (300) before it. The due calls end a day before the cutoff, so none becomes due while
   the bench runs and a second run deletes nothing.
2. The erasure of a caller with BENCH_ERASURE_CALLS (1,000) calls among 50,000 others, their events too: from the
   request to `completed` (goal: under 60 s).

Each figure carries the machine's load averages (1, 5 min) at its end: the machine may be shared.

Runs in a `voiceagent_bench_retention` database (BENCH_RETENTION_DB) on DATABASE_URL's server, dropped and seeded
afresh each run (the purge consumes its seed). On a small machine set BENCH_RETENTION_CALLS lower; the figures say
which size they are for.
"""

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

from bench.api_reads import _database_url

ROOT = Path(__file__).resolve().parent.parent
CALLS = int(os.environ.get("BENCH_RETENTION_CALLS", 1_000_000))
DUE = float(os.environ.get("BENCH_RETENTION_DUE", 0.3))
ERASURE_CALLS = int(os.environ.get("BENCH_ERASURE_CALLS", 1000))
TRANSCRIPTS_DAYS = 365
BASELINE_COMPLETIONS = int(os.environ.get("BENCH_RETENTION_COMPLETIONS", 300))
WINDOW = float(os.environ.get("BENCH_RETENTION_WINDOW", 5))
WINDOWS = int(os.environ.get("BENCH_RETENTION_WINDOWS", 40))  # even: the first and the last run, half paused
NICE = int(os.environ.get("BENCH_RETENTION_NICE", 10))
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


def _completions(org, stop: threading.Event | None, count: int, purging: threading.Event | None = None
                 ) -> list[tuple[bool | None, float]]:
    """Runtime call starts and completions in a loop (through the real view and token check): each completion's
    seconds, beside whether the purge ran all along it (True), was paused all along it (False) or neither (None:
    `purging` was not given, or it changed meanwhile). Until `stop` is set, or `count` of them."""
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
        before = purging.is_set() if purging is not None else None
        started = time.perf_counter()
        response = client.post(f"{prefix}/{call_id}/complete", body, format="json")
        elapsed = time.perf_counter() - started
        after = purging.is_set() if purging is not None else None
        samples.append((before if before == after else None, elapsed))
        assert response.status_code in (200, 201), response.content
    close_old_connections()
    return samples


def _purge_command(org) -> list[str]:
    return ["nice", "-n", str(NICE), sys.executable, "manage.py", "purge_expired_content", "--org", str(org.pk)]


def _purge(org):
    return subprocess.run(_purge_command(org), cwd=ROOT, capture_output=True, text=True,  # noqa: S603
                          env={**os.environ, "DJANGO_SETTINGS_MODULE": "bench.settings"})


def _purge_in_windows(org, purging: threading.Event, measured: threading.Event
                      ) -> tuple[subprocess.CompletedProcess, float, float]:
    """The purge in its own process (niced as the Procfile runs the maintenance worker), stopped (SIGSTOP) and
    continued (SIGCONT) every WINDOW seconds for WINDOWS windows, so completions are measured with and without it
    under the same load from the rest of the machine (a shared machine's load moves by 2x within minutes; before and
    after would compare two machines); then `measured` is set and the purge runs to its end. `purging` is set while
    it runs. Returns the finished process, its wall seconds and the seconds it was let run."""
    process = subprocess.Popen(_purge_command(org), cwd=ROOT, stdout=subprocess.PIPE,  # noqa: S603
                               stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "DJANGO_SETTINGS_MODULE": "bench.settings"})
    started = last = time.perf_counter()
    purging.set()
    ran = 0.0
    for _ in range(WINDOWS):
        try:
            process.wait(timeout=WINDOW)
            break
        except subprocess.TimeoutExpired:
            pass
        now = time.perf_counter()
        if purging.is_set():
            ran += now - last
            purging.clear()
            process.send_signal(signal.SIGSTOP)
        else:
            process.send_signal(signal.SIGCONT)
            purging.set()
        last = now
    measured.set()
    if not purging.is_set():
        process.send_signal(signal.SIGCONT)
        purging.set()
        last = time.perf_counter()
    process.wait()
    end = time.perf_counter()
    ran += end - last
    purging.clear()
    stdout, stderr = process.communicate()
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr), end - started, ran


def _purge_bench(org):
    from calls.models import Call
    from webhooks.models import Event

    due = Call.objects.filter(organization=org, content_deleted_at__isnull=True,
                              started_at__lt=_cutoff()).count()
    before = [elapsed for _, elapsed in _completions(org, None, BASELINE_COMPLETIONS)]
    before_load = _load()
    measured, purging = threading.Event(), threading.Event()
    during: list[tuple[bool | None, float]] = []
    windows_load: list[str] = []

    def measure():
        during.extend(_completions(org, measured, 0, purging))
        windows_load.append(_load())

    worker = threading.Thread(target=measure)
    worker.start()
    done, wall, ran = _purge_in_windows(org, purging, measured)
    worker.join()
    during_load = _load()
    assert done.returncode == 0, done.stderr
    deleted = Call.objects.filter(organization=org, content_deleted_reason="retention").count()
    tombstones = Event.objects.filter(organization=org, type="call.content_deleted").count()
    print(f"  purge: {deleted:,} of {CALLS:,} calls ({due:,} due; {tombstones:,} call.content_deleted events, as many "
          f"call.ended bodies made tombstones) in {ran:.1f} s of running ({wall:.1f} s with its pauses): "
          f"{deleted / ran:,.0f} calls/s {during_load}", flush=True)
    running = [elapsed for state, elapsed in during if state is True]
    paused = [elapsed for state, elapsed in during if state is False]
    print(f"  complete before the purge: p50 {_p(before, 0.5):.1f} ms, p99 {_p(before, 0.99):.1f} ms "
          f"({len(before)}) {before_load}", flush=True)
    paused_p99, running_p99 = _p(paused, 0.99), _p(running, 0.99)
    paused_p50, running_p50 = _p(paused, 0.5), _p(running, 0.5)
    print(f"  complete in its first {WINDOWS} {WINDOW:.0f}-s windows, paused: p50 {paused_p50:.1f} ms, "
          f"p99 {paused_p99:.1f} ms ({len(paused)}); running: p50 {running_p50:.1f} ms, p99 {running_p99:.1f} ms "
          f"({len(running)}): p99 {(running_p99 / paused_p99 - 1) * 100:+.0f}%, "
          f"p50 {(running_p50 / paused_p50 - 1) * 100:+.0f}% (goal: p99 within +20%) {windows_load[0]}", flush=True)
    started = time.perf_counter()
    rerun = _purge(org)
    print(f"  a second run, {time.perf_counter() - started:.1f} s: {rerun.stdout.strip().splitlines()[-1]}",
          flush=True)


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


def _fresh_database(name: str) -> str:
    """The bench's database, dropped and created again: the purge consumes its seed, and deleting a million calls
    with their events through the ORM's cascade took longer than seeding them."""
    server = urlsplit(os.environ["DATABASE_URL"])
    with psycopg.connect(urlunsplit(server._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    return _database_url(name)


def main():
    os.environ["DATABASE_URL"] = _fresh_database(os.environ.get("BENCH_RETENTION_DB", "voiceagent_bench_retention"))
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
