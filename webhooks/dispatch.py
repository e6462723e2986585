"""Putting deliveries on the broker, in batches. A failure here is logged, never raised: the sweeper re-enqueues later.

With the broker down, each publish attempt can stall for a second or more. After one failure this process
stops trying for BROKER_BACKOFF_SECONDS (a small circuit breaker), so requests that emit events stay fast;
their deliveries are already committed and the sweeper enqueues them once the broker is back.

Coalescing: every emit commits on its own, so one task per commit would cost a worker one task (a few ms of
Celery overhead) per delivery. Ids enqueued within WEBHOOK_ENQUEUE_WINDOW_SECONDS of a publish are gathered by
a background thread and published together at the end of that window; an enqueue in a quiet moment is
published at once. So a lone event waits for nothing, and under load a delivery waits at most the window. Ids
still buffered when the process dies are not lost: their rows are committed and the sweeper enqueues them.
"""

import atexit
import logging
import os
import threading
import time

logger = logging.getLogger("webhooks")
BROKER_BACKOFF_SECONDS = 5.0
_state = {"down_until": 0.0}
_lock = threading.Lock()


def _publish(delivery_ids: list[str]) -> int:
    """Sends one `deliver_batch` task per WEBHOOK_BATCH_SIZE ids; how many ids reached the broker. Never raises."""
    from . import conf
    from .tasks import deliver_batch

    if time.monotonic() < _state["down_until"]:
        return 0
    size = conf.batch_size()
    sent = 0
    for start in range(0, len(delivery_ids), size):
        chunk = [str(pk) for pk in delivery_ids[start : start + size]]
        try:
            # No publish retries: the emitting request must not hang; the sweeper covers what is not sent.
            deliver_batch.apply_async((chunk,), retry=False)
            sent += len(chunk)
        except Exception:  # noqa: BLE001 - any broker failure means "the sweeper will do it"
            with _lock:
                _state["down_until"] = time.monotonic() + BROKER_BACKOFF_SECONDS
            logger.warning("webhooks: broker unreachable; %d deliveries left to the sweeper", len(delivery_ids) - sent)
            break
    return sent


class _Coalescer:
    """One per process (re-created after a fork): a buffer of ids and the thread that publishes it."""

    def __init__(self):
        self.pid = os.getpid()
        self.cond = threading.Condition()
        self.buffer: list[str] = []
        self.window_ends = 0.0  # while now < window_ends, enqueues are buffered for the flush at window_ends
        self.window = 0.0
        self.thread = threading.Thread(target=self._run, name="webhook-enqueue", daemon=True)
        self.thread.start()

    def add(self, ids: list[str], window: float) -> bool:
        """Buffers ids when a window is open (True); otherwise opens one and returns False: publish them now."""
        with self.cond:
            now = time.monotonic()
            if now < self.window_ends:
                self.buffer.extend(ids)
                return True
            self.window, self.window_ends = window, now + window
            self.cond.notify()
            return False

    def _run(self):
        while True:
            with self.cond:
                while not self.buffer and time.monotonic() >= self.window_ends:
                    self.cond.wait()
                delay = self.window_ends - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            if self.flush():
                with self.cond:  # still busy: keep gathering for one more window
                    self.window_ends = max(self.window_ends, time.monotonic() + self.window)

    def flush(self) -> bool:
        with self.cond:
            ids, self.buffer = self.buffer, []
        if ids:
            _publish(ids)
        return bool(ids)


_coalescer: dict = {}


def _get_coalescer() -> _Coalescer:
    with _lock:
        current = _coalescer.get("c")
        if current is None or current.pid != os.getpid():
            current = _coalescer["c"] = _Coalescer()
    return current


@atexit.register
def _flush_at_exit():
    current = _coalescer.get("c")
    if current is not None and current.pid == os.getpid():
        current.flush()


def enqueue(delivery_ids: list[str], *, now: bool = False) -> int:
    """Puts deliveries on the broker in `deliver_batch` tasks of up to WEBHOOK_BATCH_SIZE ids. Runs after commit:
    never raises. Returns how many ids reached the broker, or were buffered for the publish at the end of the
    current coalescing window (see the module docstring). `now=True`, or a full batch, publishes at once."""
    from . import conf

    ids = [str(pk) for pk in delivery_ids]
    if not ids or time.monotonic() < _state["down_until"]:
        return 0
    window = conf.enqueue_window_seconds()
    if now or window <= 0 or len(ids) >= conf.batch_size():
        return _publish(ids)
    if _get_coalescer().add(ids, window):
        return len(ids)
    return _publish(ids)
