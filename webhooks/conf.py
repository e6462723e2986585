"""Delivery tunables, read from settings at use time (tests and the bench override them via the environment)."""

from django.conf import settings

from core.outbox import OutboxSettings

# docs/api.md#webhook-delivery: the Standard Webhooks schedule, the delays after attempts 1..9 (10 attempts in all,
# ~3.1 days).
DEFAULT_RETRY_SCHEDULE = (5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400)

# WEBHOOK_RETRY_SCHEDULE and WEBHOOK_REENQUEUE_AFTER_SECONDS (30 s: a due delivery enqueued longer ago than this
# and still unclaimed is presumed lost and re-enqueued), read as every outbox reads its own.
OUTBOX = OutboxSettings("WEBHOOK", retry_schedule=DEFAULT_RETRY_SCHEDULE)


def lease_seconds() -> float:
    """How long a claim holds. Longer than the 15 s request budget, so a live attempt is never sent twice."""
    return float(getattr(settings, "WEBHOOK_LEASE_SECONDS", 60))


def disable_after_seconds() -> float:
    return float(getattr(settings, "WEBHOOK_DISABLE_AFTER_SECONDS", 5 * 86400))


CONNECT_TIMEOUT = 2.0
TOTAL_TIMEOUT = 15.0
RESPONSE_KEEP_BYTES = 2048
JITTER = 0.10
RETRY_AFTER_STATUSES = frozenset({429, 502, 503, 504})
MAX_RETRY_AFTER = 86400


def batch_size() -> int:
    """Deliveries per `deliver_batch` task: what the publisher puts in one task, and how many due deliveries one
    task claims in all (its own plus others already waiting), so per-task and per-transaction costs are shared.
    POSTs that could not start within the lease's safe window (delivery.send._start_window) are given back unsent."""
    return max(1, int(getattr(settings, "WEBHOOK_BATCH_SIZE", 50)))


def send_threads() -> int:
    """Concurrent POSTs per worker process (each thread keeps its own keep-alive connections).

    32 rather than 8: a task claims and records for its free threads at once, and what a delivery costs the database
    is mostly that claim and record, whatever their size; 32 threads serve ~4x as many deliveries per claim, and the
    fairness goals still held at 32 (docs/benchmarks.md#figures-behind-the-code)."""
    return max(1, int(getattr(settings, "WEBHOOK_SEND_THREADS", 32)))


def enqueue_window_seconds() -> float:
    """After a publish, further publishes in this process within this many seconds go out together at its end
    (one task for many single-event commits; core.outbox); 0 publishes every one at once.

    0.1 s rather than 0.05: a backlog of single-event commits (a worker outage) becomes half as many tasks, and a
    worker drains it faster (the tasks whose deliveries an earlier batch took still cost something each), for a
    longer but still small emit-to-receipt time (docs/benchmarks.md#figures-behind-the-code)."""
    return float(getattr(settings, "WEBHOOK_ENQUEUE_WINDOW_SECONDS", 0.1))


def max_waiting_tasks() -> int:
    """Publishes are spared while this many `deliver_batch` tasks published in the last minute wait on the broker:
    each claims any due deliveries, not only its own, so they take the new ones too (core.outbox.WaitingTasks). At
    least the number of worker processes of every machine, so a burst still reaches them all; 0 publishes every
    batch."""
    return max(0, int(getattr(settings, "WEBHOOK_MAX_WAITING_TASKS", 16)))


def max_in_flight() -> int:
    """Deliveries of one subscription in flight at once, across every worker process and machine (the claim holds it):
    an endpoint's full share. One that times out, refuses connections or answers 429 gets half as many (at least 1)
    until its next 2xx (docs/webhooks.md#fair-delivery)."""
    return max(1, int(getattr(settings, "WEBHOOK_MAX_IN_FLIGHT", 4)))


def claim_ahead() -> int:
    """How many times its in-flight limit a sending run may claim of a healthy subscription that no other run holds
    (webhooks.delivery.claim._CLAIM_CAP), sending at most the limit at once; 1 claims only the limit.

    With only the limit claimed, each of a busy endpoint's places waited a record and a claim between POSTs
    (bench.webhook_delivery's one busy subscription; docs/benchmarks.md). 4 rather than 8: a run's gate holds a
    sender thread per delivery claimed ahead, so at 8 one endpoint could hold all 32 of a run's threads."""
    return max(1, int(getattr(settings, "WEBHOOK_CLAIM_AHEAD", 4)))
