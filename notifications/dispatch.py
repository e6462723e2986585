"""Putting send tasks on the broker. A failure here is logged, never raised: the beat sweep enqueues later.

After one failed publish this process stops trying for BROKER_BACKOFF_SECONDS (the same small circuit breaker
as webhooks.dispatch), so a request that records a callback stays fast while the broker is down; its rows are
committed and the sweep sends them once the broker is back.
"""

import logging
import threading
import time

logger = logging.getLogger("notifications")
BROKER_BACKOFF_SECONDS = 5.0
_state = {"down_until": 0.0}
_lock = threading.Lock()


def enqueue(notification_ids: list[str]) -> int:
    """Sends one `notifications.send` task per id; returns how many reached the broker. Runs after commit."""
    from .tasks import send

    if time.monotonic() < _state["down_until"]:
        return 0
    sent = 0
    for notification_id in notification_ids:
        try:
            send.apply_async((str(notification_id),), retry=False)  # no publish retries: never hang the request
            sent += 1
        except Exception:  # noqa: BLE001 - any broker failure means "the sweep will do it"
            with _lock:
                _state["down_until"] = time.monotonic() + BROKER_BACKOFF_SECONDS
            logger.warning("notifications: broker unreachable; %d e-mails left to the sweep",
                           len(notification_ids) - sent)
            break
    return sent


def send_inline(notification_ids: list[str]) -> None:
    """Sends the rows in this process (for code that already runs in a Celery worker). Never raises: a row
    that fails stays pending with its next attempt scheduled, and the sweep takes it from there."""
    from .sender import send_notification

    for notification_id in notification_ids:
        try:
            send_notification(notification_id)
        except Exception:  # noqa: BLE001 - a database hiccup here must not fail the worker's own task
            logger.exception("notifications: inline send of %s failed; the sweep will retry", notification_id)
