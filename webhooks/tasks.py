"""Celery tasks: `deliver_batch` (delivery ids, idempotent), `sweep` (beat: publish what is due) and
`purge_delivery_log` (beat, daily); and `publisher`, which puts `deliver_batch` tasks on the broker.

The task names ("webhooks.deliver_batch", ...) are what queued messages and the beat schedule carry: they stay.
"""

from celery import shared_task
from django.db import close_old_connections

from voiceagent.outbox import Publisher

from . import conf
from .retention import delivery_log_purge
from .sender import due_deliveries, send_batch


@shared_task(name="webhooks.deliver_batch", ignore_result=True)
def deliver_batch(delivery_ids: list[str]) -> None:
    """At most one HTTP attempt for each delivery that is due and unclaimed, plus other due deliveries up to the
    batch size (they are waiting on the broker behind this task; their own tasks then find them claimed).
    A duplicate run claims nothing and sends nothing."""
    close_old_connections()  # connections are reused across tasks (CELERY_DB_REUSE_MAX); drop broken or old ones
    send_batch(delivery_ids, extra=max(0, conf.batch_size() - len(delivery_ids)))


# Batches of WEBHOOK_BATCH_SIZE ids per task; single-event commits coalesced for WEBHOOK_ENQUEUE_WINDOW_SECONDS.
publisher = Publisher(
    deliver_batch, name="webhooks", items="deliveries", tunables=conf.OUTBOX, due=due_deliveries, sweep_limit=1000,
    batch_size=conf.batch_size, window=conf.enqueue_window_seconds,
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
