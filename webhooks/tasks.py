"""Celery tasks: `deliver_batch` (delivery ids, idempotent), `sweep` (beat: publish what is due) and
`purge_delivery_log` (beat, daily); and `publisher`, which puts `deliver_batch` tasks on the broker.

The task names ("webhooks.deliver_batch", ...) are what queued messages and the beat schedule carry: they stay.
"""

import logging

from celery import shared_task
from django.db import close_old_connections

from core.outbox import Publisher, WaitingTasks, broker_queue_length

from . import conf
from .delivery import send_batch
from .retention import delivery_log_purge
from .selectors import due_deliveries

logger = logging.getLogger("webhooks")


@shared_task(name="webhooks.deliver_batch", ignore_result=True)
def deliver_batch(delivery_ids: list[str]) -> None:
    """Sends due deliveries fairly across subscriptions (delivery.send_batch), one per sender thread, then more as
    POSTs finish; the ids are what woke it (their deliveries, and others', are waiting on the broker behind it;
    the ones an earlier task took are found claimed). A duplicate run sends nothing twice. When it stops while work
    is still due (delivery.REFILL_SECONDS), it queues a fresh task to carry on, so a backlog never waits for the
    sweep."""
    publisher.waiting.started(deliver_batch.request.id)
    close_old_connections()  # connections are reused across tasks (CELERY_DB_REUSE_MAX); drop broken or old ones
    if send_batch(delivery_ids, extra=conf.send_threads()).more:
        try:
            deliver_batch.apply_async(([],), retry=False)
        except Exception:  # noqa: BLE001 - a broker that is down: the sweep publishes what is still due
            logger.warning("webhooks: broker unreachable; the backlog is left to the sweep")


# Batches of WEBHOOK_BATCH_SIZE ids per task; single-event commits coalesced for WEBHOOK_ENQUEUE_WINDOW_SECONDS.
publisher = Publisher(
    deliver_batch, name="webhooks", items="deliveries", tunables=conf.OUTBOX, due=due_deliveries, sweep_limit=1000,
    batch_size=conf.batch_size, window=conf.enqueue_window_seconds,
    waiting=WaitingTasks(
        "webhooks:waiting-tasks", limit=conf.max_waiting_tasks, queued=lambda: broker_queue_length(deliver_batch)
    ),
)


@shared_task(name="webhooks.sweep", ignore_result=True)
def sweep() -> int:
    """Publishes due deliveries nobody holds: retries whose time came, lost enqueues, and leases left by dead
    workers (each taken once, then left alone for WEBHOOK_REENQUEUE_AFTER_SECONDS)."""
    close_old_connections()
    return publisher.sweep()


@shared_task(name="webhooks.purge_delivery_log", ignore_result=True)
def purge_delivery_log() -> int:
    """Daily: the delivery log keeps 30 days (docs/api.md#webhook-delivery); pending deliveries are never purged."""
    close_old_connections()
    return delivery_log_purge()
