"""Fair webhook delivery under a misbehaving tenant (docs/webhooks.md#fair-delivery), end to end, real workers.

1. Org A's emit-to-receipt p99 while org B's receiver hangs 20 s on every request: org B has a committed backlog of
   BENCH_FAIR_BACKLOG (300) deliveries to its hanging receiver, then org A emits BENCH_FAIR_RATE (10) events/s for
   BENCH_FAIR_SECONDS (15) s to a healthy receiver. Goal: p99 < 1 s (issue 24: 87.6 s before fair delivery).
2. A subscription's rate cap with 4 worker processes: BENCH_CAP (20)/s on one subscription with 30 s of due
   deliveries (600) committed at once; the most deliveries the receiver saw in any 10-second window, against
   cap x 10. Goal: <= cap x 1.05.

(The deliveries/s ratio against a plain loop with fairness on is bench.webhook_delivery's, which spreads its events
over enough subscriptions for the worker's whole concurrency.)

A real `celery -A voiceagent worker` with BENCH_WORKERS (4) processes; receivers on 127.0.0.1 in this process.
Needs PostgreSQL and Redis as bench.webhook_delivery does; leaves nothing behind (its orgs are deleted).
"""

import os
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler

from bench.webhook_delivery import Server, percentile, start_worker, stop_worker

WORKERS = int(os.environ.get("BENCH_WORKERS", 4))
BACKLOG = int(os.environ.get("BENCH_FAIR_BACKLOG", 300))
RATE = int(os.environ.get("BENCH_FAIR_RATE", 10))
SECONDS = int(os.environ.get("BENCH_FAIR_SECONDS", 15))
CAP = int(os.environ.get("BENCH_CAP", 20))
HANG = 20.0


class Receiver:
    """Records the arrival time of each webhook-id; answers after `delay` seconds."""

    def __init__(self, delay=0.0):
        self.arrivals: dict[str, float] = {}
        self.times: list[float] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                now = time.time()
                with owner.lock:
                    owner.times.append(now)
                    owner.arrivals.setdefault(self.headers.get("webhook-id", ""), now)
                if delay and owner.stop.wait(delay):
                    return  # the bench is over: drop the connection
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self):
        self.stop.set()
        self.server.shutdown()


def emit_one(org, n):
    from django.db import transaction

    from webhooks.services import emit

    t0 = time.time()
    with transaction.atomic():
        event = emit(org=org, type="call.ended", data={"call_id": f"bench-{n}", "summary": "x" * 400})
    return event.id, t0


def emit_backlog(org, count):
    from django.db import transaction

    from webhooks.services import emit

    with transaction.atomic():
        return [emit(org=org, type="call.ended", data={"call_id": f"backlog-{n}"}).id for n in range(count)]


def wait_for(receiver, ids, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with receiver.lock:
            if all(i in receiver.arrivals for i in ids):
                return
        time.sleep(0.05)
    raise RuntimeError("not every event arrived within the timeout")


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "voiceagent.settings")
    os.environ["WEBHOOK_ALLOW_LOCAL_URLS"] = "1"
    os.environ["WEBHOOK_LOCAL_URLS_OUTSIDE_DEBUG"] = "1"
    os.environ["DEBUG"] = "false"
    os.environ.setdefault("EMAIL_URL", "smtp://127.0.0.1:1")
    import django

    django.setup()
    from django.core.management import call_command

    from orgs.models import Organization
    from webhooks import conf
    from webhooks.models import Delivery, Subscription
    from webhooks.services import subscription_create

    call_command("migrate", verbosity=0)
    healthy, hanging, capped = Receiver(), Receiver(delay=HANG), Receiver()
    org_a = Organization.objects.create(name="bench fairness A")
    org_b = Organization.objects.create(name="bench fairness B")
    worker = None
    try:
        subscription_create(org=org_a, url=healthy.url, events=["call.ended"])
        subscription_create(org=org_b, url=hanging.url, events=["call.ended"])
        worker = start_worker({**os.environ, "WEBHOOK_ALLOW_LOCAL_URLS": "1"})
        for n in range(10):  # warm up connections and the pool
            emit_one(org_a, n)

        # 1. Org A while org B's receiver hangs.
        emit_backlog(org_b, BACKLOG)
        time.sleep(1)
        sent = {}
        start = time.time()
        for n in range(RATE * SECONDS):
            if (pause := start + n / RATE - time.time()) > 0:
                time.sleep(pause)
            event_id, t0 = emit_one(org_a, n)
            sent[event_id] = t0
        wait_for(healthy, list(sent), timeout=120)
        latencies = [healthy.arrivals[i] - t for i, t in sent.items()]
        b_sent = len(hanging.times)
        b_pending = Delivery.objects.filter(organization=org_b, status="pending").count()

        # 2. A rate cap, 4 worker processes.
        Subscription.objects.filter(organization=org_b).update(enabled=False)  # B's hanging POSTs end by themselves
        capped_sub, _ = subscription_create(org=org_a, url=capped.url, events=["contact.created"],
                                            rate_limit_per_second=CAP)
        from django.db import transaction

        from webhooks.services import emit

        count = CAP * 30
        with transaction.atomic():
            ids = [emit(org=org_a, type="contact.created", data={"n": n}).id for n in range(count)]
        wait_for(capped, ids, timeout=120)
        times = sorted(capped.times)
        busiest = max(sum(1 for t in times[i:] if t < first + 10.0) for i, first in enumerate(times))

        print(f"worker processes: {WORKERS} (x {conf.send_threads()} send threads), "
              f"in flight per subscription: {conf.max_in_flight()}")
        print(f"org A emit-to-receipt p50 / p99 while org B hangs {HANG:g} s: "
              f"{statistics.median(latencies) * 1000:8.1f} ms / {percentile(latencies, 99) * 1000:.1f} ms  "
              f"(max {max(latencies) * 1000:.1f} ms; {len(latencies)} events at {RATE}/s; goal p99 < 1000 ms)")
        print(f"  org B meanwhile: {b_sent} POSTs started to its hanging receiver, {b_pending} of {BACKLOG} waiting")
        print(f"rate cap {CAP}/s, {count} due at once: busiest 10-s window {busiest} deliveries = "
              f"{busiest / (CAP * 10):.3f} x cap (goal <= 1.05); all {count} in {times[-1] - times[0]:.1f} s")
    finally:
        stop_worker(worker)
        for receiver in (healthy, hanging, capped):
            receiver.close()
        org_a.delete()
        org_b.delete()
