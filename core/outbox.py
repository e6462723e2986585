"""The one outbox publisher, shared by both outboxes (webhook deliveries, notification e-mails).

An outbox is a table of rows written in the same transaction as the change that caused them (pending, due at
`next_attempt_at`, stamped `enqueued_at` when last put on the broker) and a Celery task that works rows by id.
A `Publisher` puts ids on the broker as that task:

- after commit (`publish_on_commit`), so a rolled-back change publishes nothing, and from this process's publishing
  thread, so the request that committed never waits for the broker (with the broker gone, a publish waits up to
  CELERY_BROKER_CONNECTION_TIMEOUT);
- never raising: a broker failure is logged and the rows wait for the sweep. With the broker down each publish
  can stall for a second or more, so after one failure this process stops trying for BROKER_BACKOFF_SECONDS (a
  small circuit breaker): requests that write outbox rows stay fast, and the sweep publishes the committed rows
  once the broker is back;
- in batches of `batch_size()` ids per task, or one id per task (the id itself the task's argument);
- optionally coalesced: every change commits on its own, so one task per commit would cost a worker one task
  (a few ms of Celery overhead) per row. With a `window`, ids published within `window()` seconds of a publish
  are gathered by a background thread and published together at the end of that window, or as soon as they fill
  a batch; a publish in a quiet moment goes out at once. So a lone row waits for nothing, and under load a row
  waits at most the window. A process that exits waits for a publish in flight and sends what is buffered; ids
  still buffered when the process dies are not lost: their rows are committed and the sweep takes them.

`sweep` (run by beat) takes the due rows no publish covers any more (`take_due`) and publishes them at once.

`WaitingTasks`, for a task that works any due rows and not only its own ids (the webhook sender's fair claim):
while enough of its tasks wait on the broker, a publish adds nothing they would not do, so none is made. Without
it, a burst of commits queued a task per coalescing window, and once the first tasks had drained the backlog the
workers spent a large part of the drain starting and finishing tasks that found nothing (the figure:
docs/benchmarks.md#figures-behind-the-code).
"""

import atexit
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import DurationField, Q, Value
from django.db.models.functions import Now

from core import counters

BROKER_BACKOFF_SECONDS = 5.0


class OutboxSettings:
    """The tunables every outbox has, read from Django settings at use time (tests and the bench override them
    through the environment): `<PREFIX>_RETRY_SCHEDULE` and `<PREFIX>_REENQUEUE_AFTER_SECONDS`."""

    def __init__(self, prefix: str, *, retry_schedule: tuple[float, ...], reenqueue_after_seconds: float = 30):
        self.prefix = prefix
        self.default_retry_schedule = retry_schedule
        self.default_reenqueue_after_seconds = reenqueue_after_seconds

    def retry_schedule(self) -> tuple[float, ...]:
        """The delays after failed attempts 1..n (an empty setting: the default)."""
        return tuple(getattr(settings, f"{self.prefix}_RETRY_SCHEDULE", None) or self.default_retry_schedule)

    def max_attempts(self) -> int:
        return len(self.retry_schedule()) + 1

    def reenqueue_after_seconds(self) -> float:
        """A due row enqueued longer ago than this and still pending is presumed lost by the broker: swept again."""
        return float(getattr(settings, f"{self.prefix}_REENQUEUE_AFTER_SECONDS", self.default_reenqueue_after_seconds))


def take_due(due, *, reenqueue_after_seconds: float, limit: int) -> list[str]:
    """Ids of rows in `due` (a queryset already filtered to pending, due rows) that no sweep enqueued in the last
    `reenqueue_after_seconds`, stamped `enqueued_at` now.

    SELECT ... FOR UPDATE SKIP LOCKED: a row being worked on, or taken by an overlapping sweep, is skipped, so
    two sweepers never enqueue one row twice; a row whose enqueue the broker lost is taken again once stale.
    """
    # PostgreSQL's clock (Now() is the statement's time): two sweepers on machines whose clocks disagree still agree
    # on what is stale.
    stale = Now() - Value(timedelta(seconds=reenqueue_after_seconds), output_field=DurationField())
    with transaction.atomic():
        ids = list(
            due.select_for_update(skip_locked=True)
            .filter(Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=stale))
            .order_by("next_attempt_at")
            .values_list("pk", flat=True)[:limit]
        )
        if ids:
            due.model.objects.filter(pk__in=ids).update(enqueued_at=Now())
    return [str(pk) for pk in ids]


class Publisher:
    """Puts one outbox's row ids on the broker as `task` (see the module docstring).

    `name` names the log (and the coalescing thread); `items` says what a row is, in log lines. `due()` is the
    queryset of the rows that are pending and due (the sweep's candidates); `tunables` gives the re-enqueue delay.
    `batch_size()`, when given, is how many ids go in one task (its argument a list); without it each id is its
    own task. `window()`, when given, is the coalescing window in seconds (0: publish every call at once).
    """

    def __init__(
        self, task, *, name: str, items: str, tunables: OutboxSettings, due: Callable, sweep_limit: int,
        batch_size: Callable[[], int] | None = None, window: Callable[[], float] | None = None,
        waiting: "WaitingTasks | None" = None,
    ):
        self.task = task
        self.name = name
        self.items = items
        self.tunables = tunables
        self.due = due
        self.sweep_limit = sweep_limit
        self.batch_size = batch_size
        self.window = window
        self.waiting = waiting
        self.logger = logging.getLogger(name)
        self.down_until = 0.0  # the circuit breaker: no publish before this time.monotonic()
        self._lock = threading.Lock()
        self._coalescer: _Coalescer | None = None
        _publishers.append(self)

    def publish(self, ids, *, now: bool = False, background: bool = False, spare: bool = True) -> int:
        """Puts `ids` on the broker; returns how many reached it, or were buffered for the publish at the end of
        the current coalescing window. `now=True`, a full batch, or no window publishes at once. `background=True`
        hands them to this process's publishing thread instead, so the caller never waits for the broker (a
        request after its commit). `spare=False` (the sweep) publishes even while enough tasks wait. Never
        raises."""
        ids = [str(pk) for pk in ids]
        if not ids or time.monotonic() < self.down_until:
            return 0
        window = self.window() if self.window else 0
        if background:
            self._get_coalescer().push(ids, window)
            return len(ids)
        if now or window <= 0 or len(ids) >= self._size():
            return self._send(ids, spare=spare)
        if self._get_coalescer().add(ids, window):
            return len(ids)
        return self._send(ids)

    def publish_on_commit(self, ids) -> None:
        """Publishes `ids` once the current transaction commits (nothing if it rolls back)."""
        ids = [str(pk) for pk in ids]
        if ids:
            transaction.on_commit(lambda: self.publish(ids, background=True))

    def sweep(self) -> int:
        """Publishes the due rows that no publish covers any more (retries whose time came, enqueues the broker
        lost): taken once with `take_due`, so overlapping sweeps do not publish one row twice. Returns how many
        reached the broker."""
        ids = take_due(
            self.due(), reenqueue_after_seconds=self.tunables.reenqueue_after_seconds(), limit=self.sweep_limit
        )
        return self.publish(ids, now=True, spare=False) if ids else 0

    def _size(self) -> int:
        return self.batch_size() if self.batch_size else 1

    def _send(self, ids: list[str], *, spare: bool = True) -> int:
        """One task per `_size()` ids; how many ids reached the broker. With `spare` (all but the sweep, the safety
        net), nothing is published while enough of this publisher's tasks wait (`WaitingTasks`)."""
        if time.monotonic() < self.down_until:
            return 0
        size = self._size()
        if not spare and self.waiting is not None and (room := self.waiting.room()):
            # The sweep's rows go to as many tasks as there is room for beside those already waiting, each task with
            # a bigger share (every task claims any due rows, so the ids only say what woke it). One task per batch
            # left a tail after a backlog: a few tasks sent everything, then many more found nothing
            # (docs/benchmarks.md#figures-behind-the-code).
            size = max(size, -(-len(ids) // room))
        sent = 0
        for start in range(0, len(ids), size):
            chunk = ids[start : start + size]
            if spare and self.waiting is not None and self.waiting.enough():
                return len(ids)  # the tasks waiting take these rows too
            try:
                # No publish retries: the publishing request must not hang; the sweep covers what is not sent.
                task_id = str(uuid.uuid4())
                self.task.apply_async((chunk if self.batch_size else chunk[0],), retry=False, task_id=task_id)
                sent += len(chunk)
                if self.waiting is not None:
                    self.waiting.add(task_id)
            except Exception:  # noqa: BLE001 - any broker failure means "the sweep will do it"
                with self._lock:
                    self.down_until = time.monotonic() + BROKER_BACKOFF_SECONDS
                self.logger.warning(
                    "%s: broker unreachable; %d %s left to the sweep", self.name, len(ids) - sent, self.items
                )
                break
        return sent

    def _get_coalescer(self) -> "_Coalescer":
        with self._lock:
            if self._coalescer is None or self._coalescer.pid != os.getpid():
                self._coalescer = _Coalescer(self._send, name=f"{self.name}-publish", full=self._size)
            return self._coalescer

    def flush(self) -> None:
        """Publishes what this process's coalescing window holds now (at exit)."""
        current = self._coalescer
        if current is not None and current.pid == os.getpid():
            current.flush()


class _Coalescer:
    """One per publisher and process (re-created after a fork): a buffer of ids and the thread that publishes it."""

    def __init__(self, send: Callable[[list[str]], int], *, name: str, full: Callable[[], int]):
        self.send = send
        self.full = full  # a buffer this long is published at once: waiting longer would only delay it
        self.pid = os.getpid()
        self.cond = threading.Condition()
        self.buffer: list[str] = []
        self.window_ends = 0.0  # while now < window_ends, publishes are buffered for the flush at window_ends
        self.window = 0.0
        # Held for a whole flush, so the flush at exit waits for one the thread has in flight: a daemon thread
        # is stopped where it stands when the interpreter ends, and a publish cut there is lost to the broker
        # (a command like simulate_calls ended before its events were out; the sweep found them 30 s later).
        self.flushing = threading.Lock()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def add(self, ids: list[str], window: float) -> bool:
        """Buffers ids when a window is open (True); otherwise opens one and returns False: publish them now."""
        with self.cond:
            now = time.monotonic()
            if now < self.window_ends:
                self.buffer.extend(ids)
                if len(self.buffer) >= self.full():
                    self.cond.notify()
                return True
            self.window, self.window_ends = window, now + window
            self.cond.notify()
            return False

    def push(self, ids: list[str], window: float) -> None:
        """Buffers ids for the thread: sent at once in a quiet moment, at the end of the open window otherwise."""
        with self.cond:
            self.buffer.extend(ids)
            now = time.monotonic()
            if now >= self.window_ends:
                self.window, self.window_ends = window, now
            self.cond.notify()

    def _run(self):
        while True:
            with self.cond:
                while not self.buffer and time.monotonic() >= self.window_ends:
                    self.cond.wait()
                while len(self.buffer) < self.full() and (delay := self.window_ends - time.monotonic()) > 0:
                    self.cond.wait(delay)
            if self.flush():
                with self.cond:  # still busy: keep gathering for one more window
                    self.window_ends = max(self.window_ends, time.monotonic() + self.window)

    def flush(self) -> bool:
        with self.flushing:
            with self.cond:
                ids, self.buffer = self.buffer, []
            if ids:
                self.send(ids)
        return bool(ids)


class WaitingTasks:
    """The tasks of one publisher put on the broker and not started yet (`started` from the task itself), in Redis,
    so every process sees them: `enough()` when at least `limit()` published within the last `max_age` seconds are
    still waiting, and the broker's queue does hold at least that many messages (`queued()`: a purged queue or a
    broker that lost its data has none, whatever was counted). A task lost or still queued after `max_age` no
    longer counts either. It can only delay a row, never strand it: the sweep (every few seconds) is never spared
    and publishes every due row no task took, in as many tasks as there is `room()` for (at least one; the first
    sweep after an outage used to publish one task per batch, and most of them then found nothing). Without Redis
    nothing is spared."""

    def __init__(self, key: str, *, limit: Callable[[], int], queued: Callable[[], int | None],
                 max_age: float = 60.0):
        self.key = key
        self.limit = limit
        self.queued = queued
        self.max_age = max_age

    def enough(self) -> bool:
        limit = self.limit()
        return limit > 0 and self._waiting() >= limit

    def room(self) -> int | None:
        """How many more tasks are worth publishing now, at least 1: `limit()` less those waiting. None without a
        limit."""
        limit = self.limit()
        return max(1, limit - self._waiting()) if limit > 0 else None

    def _waiting(self) -> int:
        """The tasks counted as waiting, at most as many as the broker's queue holds (0 when either is unknown)."""
        return min(counters.recent_count(self.key, max_age=self.max_age) or 0, self.queued() or 0)

    def add(self, task_id: str) -> None:
        counters.recent_add(self.key, task_id, max_age=self.max_age)

    def started(self, task_id: str | None) -> None:
        if task_id:
            counters.recent_remove(self.key, task_id)


def task_queue(task) -> str:
    """The name of the queue `task` is published to: its route (CELERY_TASK_ROUTES), as `apply_async` resolves it.
    A task has no `queue` attribute unless one is set on it (reading it raised, and every length was None: nothing
    was ever spared, and a worker outage's backlog came back as a task per commit window); and with routes it is
    not the default queue either."""
    queue = task.app.amqp.router.route({}, task.name)["queue"]
    return getattr(queue, "name", queue)


def broker_queue_length(task) -> int | None:
    """Messages waiting in `task`'s queue when the broker is Redis (None: another broker, or unreachable)."""
    app = task.app
    try:
        with app.pool.acquire(block=True, timeout=1) as conn:
            client = getattr(conn.default_channel, "client", None)
            if not hasattr(client, "llen"):
                return None
            return int(client.llen(task_queue(task)))
    except Exception:  # noqa: BLE001 - not knowing spares nothing
        return None


_publishers: list[Publisher] = []


def reset_breakers() -> None:
    """Lets every publisher of this process try the broker again at once (tests that stop the broker)."""
    for publisher in _publishers:
        publisher.down_until = 0.0


@atexit.register
def _flush_at_exit():
    for publisher in _publishers:
        publisher.flush()
