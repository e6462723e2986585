"""Celery tasks: `deliver_batch` (delivery ids, idempotent), `deliver` (one id, the same path) and `sweep`
(beat: enqueue what is due)."""

from celery import shared_task
from django.db import close_old_connections


@shared_task(name="webhooks.deliver_batch", ignore_result=True)
def deliver_batch(delivery_ids: list[str]) -> None:
    """At most one HTTP attempt for each delivery that is due and unclaimed, plus other due deliveries up to the
    batch size (they are waiting on the broker behind this task; their own tasks then find them claimed).
    A duplicate run claims nothing and sends nothing."""
    from . import conf
    from .sender import deliver_batch as run_batch

    close_old_connections()  # connections are reused across tasks (CELERY_DB_REUSE_MAX); drop broken or old ones
    run_batch(delivery_ids, extra=max(0, conf.batch_size() - len(delivery_ids)))


@shared_task(name="webhooks.deliver", ignore_result=True)
def deliver(delivery_id: str) -> None:
    """One delivery id (tasks queued before batching existed): a batch of one."""
    deliver_batch([delivery_id])


@shared_task(name="webhooks.sweep", ignore_result=True)
def sweep() -> int:
    """Enqueues due deliveries: retries whose time came, lost enqueues, and leases left by dead workers."""
    from .sender import sweep_due

    close_old_connections()
    return sweep_due()


@shared_task(name="webhooks.purge_delivery_log", ignore_result=True)
def purge_delivery_log() -> int:
    """Daily: the delivery log keeps 30 days (decisions.md); pending deliveries are never purged."""
    from .services import delivery_log_purge

    close_old_connections()
    return delivery_log_purge()
