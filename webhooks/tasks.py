"""Celery tasks: `deliver` (one delivery id, idempotent) and `sweep` (beat: enqueue what is due)."""

from celery import shared_task
from django.db import close_old_connections


@shared_task(name="webhooks.deliver", ignore_result=True)
def deliver(delivery_id: str) -> None:
    """Makes at most one HTTP attempt for the delivery, if it is due and unclaimed; a duplicate run is a no-op."""
    from .sender import attempt_delivery

    close_old_connections()  # connections are reused across tasks (CELERY_DB_REUSE_MAX); drop broken or old ones
    attempt_delivery(delivery_id)


@shared_task(name="webhooks.sweep", ignore_result=True)
def sweep() -> int:
    """Enqueues due deliveries: retries whose time came, lost enqueues, and leases left by dead workers."""
    from .sender import sweep_due

    close_old_connections()
    return sweep_due()
