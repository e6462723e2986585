"""Webhook delivery throughput and latency, end to end, against a plain `requests` baseline.

What runs: a local HTTP receiver (threads, 127.0.0.1), a real `celery -A voiceagent worker` with 4 processes,
and this process emitting events through `webhooks.services.emit` (one transaction per event, as real code does).
Fair delivery is on (docs/webhooks.md#fair-delivery): the events are spread over organizations with one subscription
each, twice as many as the worker's concurrency needs at WEBHOOK_MAX_IN_FLIGHT each (64 by default; `tenants()`).

1. Live burst: 2,000 events emitted as fast as one process can; p50/p99 emit-to-receipt, and deliveries/s from
   the first emit to the last receipt. That rate cannot exceed the emitter's own rate (printed too): one Python
   process committing one transaction per event, sharing the machine, is usually the bottleneck there.
2. Delivery throughput: 2,000 events committed to the outbox (and their tasks queued) while the worker is
   stopped, then the worker started; deliveries/s from the first receipt until the worker's queue is empty
   (Redis; tasks whose delivery an earlier batch already took still cost time). This is the delivery side alone,
   the thing the baseline measures.
3. Baseline, right after each drain (the worker idle): the same bodies POSTed by as many processes and threads as
   the worker has (4 x WEBHOOK_SEND_THREADS), each thread a plain keep-alive `requests.Session` loop, to the same
   receiver, measured the same way (first receipt to last). The ratio is (2) / (3) of the same pair, and the figure
   the median of BENCH_PAIRS (3) pairs: this machine's speed drifts by up to 2x within minutes, so a drain is
   compared with the loop run seconds after it (until 2026-11-26, the best of two drains against the best of two
   loops run after both).
4. Latency at 100 events/s for 10 s: p99 emit-to-receipt.
5. One busy subscription (a large organization with one CRM endpoint): BENCH_BUSY_EVENTS (1,000) committed to it
   alone, drained as in (2), against a keep-alive loop with the in-flight cap's own concurrency (WEBHOOK_MAX_IN_FLIGHT
   threads, 4), run right after; the median of BENCH_PAIRS pairs (issue 38: goal >= 0.8).
6. Two worker processes on separate queues (`-Q deliveries`, and `-Q email,maintenance` with beat, as the Procfile
   splits them) against one worker on all three: the drain of (2) by each, back to back; the median of BENCH_PAIRS
   pairs of two / one (issue 38: goal not lower).

The worker and this process run with DEBUG off, as in production (.env turns it on for `make run`).
The receiver runs in this process; it is idle but for the receiver during (2) and (3), so both see the same
receiver. The worker sends a batch's POSTs from WEBHOOK_SEND_THREADS threads per process (printed), and so
does the baseline.

Needs PostgreSQL (DATABASE_URL; it migrates) and Redis (REDIS_URL): `make bench` starts embedded ones when
they are unset. Leaves nothing behind: the bench org and its rows are deleted at the end.
Options by environment: BENCH_EVENTS (2000), BENCH_WORKERS (4), BENCH_RATE (100), BENCH_RATE_SECONDS (10),
BENCH_PAIRS (3), BENCH_BUSY_EVENTS (1000), BENCH_DELIVERY_PARTS (burst,drain,rate,busy,queues: the parts to run).
"""

import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVENTS = int(os.environ.get("BENCH_EVENTS", 2000))
WORKERS = int(os.environ.get("BENCH_WORKERS", 4))
RATE = int(os.environ.get("BENCH_RATE", 100))
RATE_SECONDS = int(os.environ.get("BENCH_RATE_SECONDS", 10))
PAIRS = int(os.environ.get("BENCH_PAIRS", 3))
BUSY_EVENTS = int(os.environ.get("BENCH_BUSY_EVENTS", 1000))


class Server(ThreadingHTTPServer):
    # A class attribute: listen() runs in the constructor. The default backlog of 5 overflows when a fresh worker
    # opens its 32 connections at once, and the kernel then resets some of them.
    request_queue_size = 1024
    daemon_threads = True


class Receiver:
    """Records the arrival time of each webhook-id (or of each baseline request)."""

    def __init__(self):
        self.arrivals: dict[str, float] = {}
        self.count = 0
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                now = time.time()
                with owner.lock:
                    owner.count += 1
                    owner.arrivals.setdefault(self.headers.get("webhook-id", ""), now)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def wait(self, ids, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                if all(i in self.arrivals for i in ids):
                    return
            time.sleep(0.02)
        with self.lock:
            missing = [i for i in ids if i not in self.arrivals]
        from webhooks.models import Delivery

        states = list(Delivery.objects.filter(event_id__in=missing[:50]).values_list(
            "status", "attempt_count", "claimed_until", "next_attempt_at", "last_error"))
        raise RuntimeError(f"{len(missing)} of {len(ids)} events not received within {timeout} s; their deliveries "
                           f"(status, attempts, lease, due, last error): {states[:10]}")


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def start_worker(env, *, queues=None, beat=True, concurrency=WORKERS, name="bench"):
    """A Celery worker of `concurrency` processes on `queues` (all three when None), with beat embedded unless told
    otherwise; returns once it is ready."""
    log = Path(tempfile.mkdtemp(prefix="bench-worker-")) / "worker.log"
    command = [sys.executable, "-m", "celery", "-A", "voiceagent", "worker", "--loglevel", "INFO",
               "--concurrency", str(concurrency), "-n", f"{name}-{os.getpid()}@%h",
               "--without-heartbeat", "--without-gossip", "--without-mingle"]
    if beat:  # as production runs it: the sweep publishes retries and anything no task took
        command += ["-B", "--schedule", str(log.parent / "beat-schedule")]
    if queues:
        command += ["-Q", ",".join(queues)]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    deadline = time.time() + 60
    while b" ready." not in log.read_bytes():
        if process.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"worker did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.1)
    return process


def stop_worker(process):
    """Warm shutdown (SIGTERM to the main process only, so the pool finishes and acks), SIGKILL after 20 s."""
    import signal

    if process and process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def unacked_ids(broker_url) -> set:
    """The Redis broker's unacknowledged deliveries now (empty: not Redis). Taken before a drain, so that entries left
    by an earlier, killed run (restored only after the visibility timeout) are not waited for."""
    if not broker_url.startswith("redis://"):
        return set()
    import redis

    return set(redis.Redis.from_url(broker_url).hkeys("unacked"))


def wait_queue_empty(broker_url, timeout, *, leftovers=frozenset()):
    """When the Redis broker's default queue and its unacked set (but for `leftovers`) were first seen empty (None:
    not Redis)."""
    if not broker_url.startswith("redis://"):
        return None
    import redis

    client = redis.Redis.from_url(broker_url)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if client.llen("deliveries") == 0 and not (set(client.hkeys("unacked")) - leftovers):
            return time.time()
        time.sleep(0.01)
    raise RuntimeError("the worker's queue did not empty")


def _baseline_chunk(args):
    """One baseline process: `threads` threads, each with its own keep-alive `requests.Session`, as the worker's
    processes send a batch from WEBHOOK_SEND_THREADS threads."""
    import requests

    url, bodies, tag, threads = args

    def send(offset):
        session = requests.Session()
        for i in range(offset, len(bodies), threads):
            headers = {"Content-Type": "application/json", "webhook-id": f"{tag}-{i}"}  # unique per request
            session.post(url, data=bodies[i], headers=headers, timeout=(2, 15)).raise_for_status()

    pool = [threading.Thread(target=send, args=(offset,)) for offset in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return len(bodies)


def tenants() -> int:
    """How many organizations (one subscription each) the events are spread over. Fair delivery lets a subscription
    have WEBHOOK_MAX_IN_FLIGHT (4) deliveries in flight, counted from claim to record (not only during the POST), so
    the worker's WORKERS x WEBHOOK_SEND_THREADS concurrency (what the baseline uses) needs more subscriptions than
    concurrency / 4: twice that, as a shared pool serving many tenants has."""
    from webhooks import conf

    return 2 * -(-WORKERS * conf.send_threads() // conf.max_in_flight())


def emit_events(orgs, count, rate=None):
    from django.db import transaction

    from webhooks.services import emit

    sent = {}
    start = time.time()
    for n in range(count):
        if rate:
            target = start + n / rate
            if (pause := target - time.time()) > 0:
                time.sleep(pause)
        t0 = time.time()
        with transaction.atomic():
            org = orgs[n % len(orgs)]
            event = emit(org=org, type="call.ended", data={"call_id": f"bench-{n}", "summary": "x" * 400})
        sent[event.id] = t0
    return sent


def _drain(orgs, count, receiver, broker_url, start) -> tuple[list, float, float]:
    """A committed backlog of `count` events over `orgs` (their tasks queued as the emits publish them) while no worker
    runs, then `start()` (the worker processes it returns stay up for the caller to stop): deliveries/s from the first
    receipt until the deliveries queue is empty, and until the last receipt. Tasks whose deliveries another batch
    already sent still cost time, so the worker is done only when its queue is."""
    leftovers = unacked_ids(broker_url)
    backlog = emit_events(orgs, count)
    workers = start()
    receiver.wait(list(backlog), timeout=300)
    arrivals = [receiver.arrivals[i] for i in backlog]
    idle_at = wait_queue_empty(broker_url, timeout=300, leftovers=leftovers) or max(arrivals)
    drained = (count - 1) / (max(idle_at, max(arrivals)) - min(arrivals))
    received = (count - 1) / (max(arrivals) - min(arrivals))
    return workers, drained, received


def _loop(pool, receiver, bodies, tag, processes, threads) -> float:
    """The plain baseline: `bodies` POSTed by `processes` x `threads` keep-alive `requests` loops to the receiver,
    measured as a drain is (first receipt to last)."""
    chunks = [(receiver.url, bodies[i::processes], f"{tag}-{i}", threads) for i in range(processes)]
    total = sum(pool.map(_baseline_chunk, chunks))
    with receiver.lock:
        arrivals = [t for i, t in receiver.arrivals.items() if i.startswith(f"{tag}-")]
    assert len(arrivals) == total
    return (total - 1) / (max(arrivals) - min(arrivals))


def _median_pair(pairs):
    return sorted(pairs)[len(pairs) // 2]


def _load() -> str:
    return "load " + " / ".join(f"{x:.1f}" for x in os.getloadavg())


def main():
    """BENCH_DELIVERY_PARTS picks parts (comma-separated): burst, drain, rate, busy, queues; all by default."""
    parts = set(os.environ.get("BENCH_DELIVERY_PARTS", "burst,drain,rate,busy,queues").split(","))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "voiceagent.settings")
    os.environ["WEBHOOK_ALLOW_LOCAL_URLS"] = "1"
    os.environ["WEBHOOK_LOCAL_URLS_OUTSIDE_DEBUG"] = "1"  # the receiver is on loopback, DEBUG is off (below)
    os.environ["DEBUG"] = "false"  # as in production (.env turns it on for `make run`); the worker inherits it
    # Outside DEBUG the service refuses console mail; the bench sends none, so any server name will do.
    os.environ.setdefault("EMAIL_URL", "smtp://127.0.0.1:1")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from orgs.models import Organization
    from webhooks import conf
    from webhooks.models import Event
    from webhooks.services import subscription_create

    call_command("migrate", verbosity=0)
    from django.db import connection

    with connection.cursor() as cursor:
        # What earlier runs left (their org is deleted at the end) is garbage that autovacuum would have cleared
        # since; a server run with autovacuum off (CI's and this machine's are) never clears it, and every claim
        # then reads it. Only the previous runs' rows: this run's own dead rows stay, as they would in production.
        cursor.execute(
            "VACUUM (ANALYZE) webhooks_delivery, webhooks_deliveryattempt, webhooks_event, webhooks_subscription"
        )
    broker = settings.CELERY_BROKER_URL
    receiver = Receiver()
    orgs = [Organization.objects.create(name=f"bench webhooks {n}") for n in range(tenants())]
    busy_org = Organization.objects.create(name="bench webhooks busy")
    workers = []
    lines = [f"events: {EVENTS}, worker processes: {WORKERS} (x {conf.send_threads()} send threads, batches of "
             f"{conf.batch_size()}), fair delivery: {len(orgs)} orgs with a subscription each x "
             f"{conf.max_in_flight()} in flight, broker: {broker.split('://')[0]}, "
             f"database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}"]

    def stop_all():
        for process in workers:
            stop_worker(process)
        workers.clear()

    try:
        for org in orgs:
            subscription_create(org=org, url=receiver.url, events=["call.ended"])
        subscription_create(org=busy_org, url=receiver.url, events=["call.ended"])
        worker_env = {**os.environ, "WEBHOOK_ALLOW_LOCAL_URLS": "1"}
        workers.append(start_worker(worker_env))

        emit_events(orgs, 20)  # warm up connections and the worker pool
        time.sleep(2)

        # 1. Live burst: emit-to-receipt latency, end-to-end rate (bounded by the emitter).
        sent = emit_events(orgs, EVENTS)
        receiver.wait(list(sent), timeout=300)
        if "burst" in parts:
            emit_rate = EVENTS / (max(sent.values()) - min(sent.values()))
            first, last = min(sent.values()), max(receiver.arrivals[i] for i in sent)
            latencies = [receiver.arrivals[i] - t for i, t in sent.items()]
            lines += [
                f"live burst: emitter events/s:  {emit_rate:8.1f}  (one process, one transaction per event)",
                f"live burst: deliveries/s:      {EVENTS / (last - first):8.1f}  (first emit to last receipt; <= the "
                "emitter's rate)",
                f"emit-to-receipt p50 / p99:     {statistics.median(latencies) * 1000:8.1f} ms / "
                f"{percentile(latencies, 99) * 1000:.1f} ms  (burst of {EVENTS})",
            ]
        bodies = [bytes(b) for b in Event.objects.filter(pk__in=list(sent)).values_list("payload", flat=True)]

        with Pool(WORKERS) as pool:

            def drained_then_loop(orgs_, events, bodies_, tag, processes, threads) -> list[tuple]:
                """PAIRS times: `events` per org of `orgs_` drained by a fresh worker, then the plain loop right
                after it with `processes` x `threads`: (drained / loop, drained, to the last receipt, loop)."""
                pairs = []
                for run in range(PAIRS):
                    stop_all()
                    started, drained, received = _drain(orgs_, events, receiver, broker,
                                                        lambda: [start_worker(worker_env)])
                    workers.extend(started)
                    loop = _loop(pool, receiver, bodies_, f"{tag}-{run}", processes, threads)
                    pairs.append((drained / loop, drained, received, loop))
                return pairs

            # 2 and 3, in pairs: a drain by a fresh worker, then the baseline right after it, with the worker's
            # processes and threads. This machine's speed drifts by up to 2x within minutes, so each drain is
            # compared with the loop run seconds later, not with the best loop of the run.
            if "drain" in parts:
                pairs = drained_then_loop(orgs, EVENTS, bodies, "base", WORKERS, conf.send_threads())
                ratio, throughput, received, baseline = _median_pair(pairs)
                lines += [
                    f"webhook deliveries/s:          {throughput:8.1f}  (committed backlog, first receipt to the "
                    f"worker's queue empty; to the last receipt: {received:.1f})",
                    f"plain requests loop req/s:     {baseline:8.1f}  ({WORKERS} processes x {conf.send_threads()} "
                    "threads, same receiver, same measure, right after that drain)",
                    f"ratio webhooks / plain:        {ratio:8.2f}  (goal >= 0.9; the median of {PAIRS} pairs: "
                    f"{', '.join(f'{p[0]:.2f} ({p[1]:.0f} / {p[3]:.0f})' for p in pairs)}; {_load()})",
                ]

            # 5. One busy subscription (a large organization, one CRM endpoint): its backlog drained by the same
            # worker, against a keep-alive loop with the in-flight cap's own concurrency, in pairs as above.
            if "busy" in parts:
                busy = drained_then_loop([busy_org], BUSY_EVENTS, bodies[:BUSY_EVENTS], "busy", 1,
                                         conf.max_in_flight())
                ratio, throughput, received, baseline = _median_pair(busy)
                lines += [
                    f"one busy subscription:         {throughput:8.1f}  deliveries/s ({BUSY_EVENTS} committed, to "
                    f"the queue empty; to the last receipt: {received:.1f})",
                    f"  keep-alive loop, {conf.max_in_flight()} conns:   {baseline:8.1f}  req/s (the in-flight cap's "
                    "concurrency, right after that drain)",
                    f"  ratio busy / loop:           {ratio:8.2f}  (goal >= 0.8; the median of {PAIRS} pairs: "
                    f"{', '.join(f'{p[0]:.2f} ({p[1]:.0f} / {p[3]:.0f})' for p in busy)}; {_load()})",
                ]

        # 6. Two worker processes on separate queues (the Procfile's split: deliveries apart from e-mail and
        # maintenance, beat with the latter) against one worker on all three, each pair run back to back.
        if "queues" in parts:
            split = []
            for _ in range(PAIRS):
                stop_all()
                started, one, _ = _drain(orgs, EVENTS, receiver, broker, lambda: [start_worker(worker_env)])
                workers.extend(started)
                stop_all()
                # The maintenance worker first: one booting beside the drain took CPU from it (0.36 - 0.55 of the
                # single worker's rate when it started second, 2026-11-28), which is no cost of the split.
                started, two, _ = _drain(orgs, EVENTS, receiver, broker, lambda: [
                    start_worker(worker_env, queues=["email", "maintenance"], concurrency=1, name="maintenance"),
                    start_worker(worker_env, queues=["deliveries"], beat=False, name="deliveries"),
                ])
                workers.extend(started)
                split.append((two / one, two, one))
            ratio, two, one = _median_pair(split)
            lines.append(
                f"two workers, separate queues:  {two:8.1f}  deliveries/s against one worker on all queues "
                f"{one:.1f}: ratio {ratio:.2f} (goal >= 1.0, not lower; the median of {PAIRS} pairs: "
                f"{', '.join(f'{p[0]:.2f}' for p in split)}; {_load()})"
            )
        stop_all()
        workers.append(start_worker(worker_env))

        # 4. Latency at a steady rate.
        if "rate" in parts:
            rated = emit_events(orgs, RATE * RATE_SECONDS, rate=RATE)
            receiver.wait(list(rated), timeout=120)
            rated_latencies = [receiver.arrivals[i] - t for i, t in rated.items()]
            lines.append(f"p99 emit-to-receipt @ {RATE}/s:   {percentile(rated_latencies, 99) * 1000:8.1f} ms  "
                         f"(p50 {statistics.median(rated_latencies) * 1000:.1f} ms; goal p99 < 1000 ms)")
        from webhooks.models import DeliveryAttempt

        failed = DeliveryAttempt.objects.filter(organization__in=[*orgs, busy_org]).exclude(error="").count()
        lines.append(f"attempts that failed:          {failed:8d}  (each retried on the schedule, published by the "
                     "sweep)")
        print("\n".join(lines))
    finally:
        stop_all()
        for org in [*orgs, busy_org]:
            org.delete()
        receiver.server.shutdown()
