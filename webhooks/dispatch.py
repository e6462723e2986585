"""Putting deliveries on the broker. A failure here is logged, never raised: the sweeper re-enqueues later."""

import logging

logger = logging.getLogger("webhooks")


def enqueue(delivery_ids: list[str]) -> int:
    """Sends one `deliver` task per id; returns how many reached the broker. Runs after commit, so it must not raise."""
    from .tasks import deliver

    sent = 0
    for delivery_id in delivery_ids:
        try:
            # No publish retries: with the broker down, the request that emitted must not hang; the sweep covers it.
            deliver.apply_async((delivery_id,), retry=False)
            sent += 1
        except Exception:  # noqa: BLE001 - any broker failure means "the sweeper will do it"
            logger.warning("webhooks: could not enqueue %d deliveries; the sweeper will", len(delivery_ids) - sent)
            break
    return sent
