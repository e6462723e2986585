"""Putting deliveries on the broker, in batches. A failure here is logged, never raised: the sweeper re-enqueues later.

With the broker down, each publish attempt can stall for a second or more. After one failure this process
stops trying for BROKER_BACKOFF_SECONDS (a small circuit breaker), so requests that emit events stay fast;
their deliveries are already committed and the sweeper enqueues them once the broker is back.
"""

import logging
import threading
import time

logger = logging.getLogger("webhooks")
BROKER_BACKOFF_SECONDS = 5.0
_state = {"down_until": 0.0}
_lock = threading.Lock()


def enqueue(delivery_ids: list[str]) -> int:
    """Sends one `deliver_batch` task per WEBHOOK_BATCH_SIZE ids; returns how many ids reached the broker.
    Runs after commit: never raises."""
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
