"""Putting deliveries on the broker. A failure here is logged, never raised: the sweeper re-enqueues later.

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
    """Sends one `deliver` task per id; returns how many reached the broker. Runs after commit: never raises."""
    from .tasks import deliver

    if time.monotonic() < _state["down_until"]:
        return 0
    sent = 0
    for delivery_id in delivery_ids:
        try:
            # No publish retries: the emitting request must not hang; the sweeper covers what is not sent.
            deliver.apply_async((delivery_id,), retry=False)
            sent += 1
        except Exception:  # noqa: BLE001 - any broker failure means "the sweeper will do it"
            with _lock:
                _state["down_until"] = time.monotonic() + BROKER_BACKOFF_SECONDS
            logger.warning("webhooks: broker unreachable; %d deliveries left to the sweeper", len(delivery_ids) - sent)
            break
    return sent
