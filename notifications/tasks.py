"""Celery tasks: `send` (one EmailNotification id, idempotent) and `sweep` (beat: publish what is due); and
`publisher`, which puts `send` tasks on the broker.

The task names ("notifications.send", "notifications.sweep") are what queued messages and the beat schedule
carry: they stay.
"""

from celery import shared_task
from django.db import close_old_connections

from core.outbox import Publisher

from . import conf
from .sender import due_notifications, send_notification


@shared_task(name="notifications.send", ignore_result=True)
def send(notification_id: str) -> str:
    """Sends one notification e-mail if it is pending and due; a duplicate run is a no-op (see sender)."""
    close_old_connections()  # connections are reused across tasks (CELERY_DB_REUSE_MAX); drop broken or old ones
    return send_notification(notification_id)


# One task per e-mail, published at once (no coalescing: a few e-mails per change, each one a caller waiting).
publisher = Publisher(
    send, name="notifications", items="e-mails", tunables=conf.OUTBOX, due=due_notifications, sweep_limit=500
)


@shared_task(name="notifications.sweep", ignore_result=True)
def sweep() -> int:
    """Publishes due e-mails: retries whose time came, and sends the broker lost (each taken once, then left
    alone for NOTIFICATION_REENQUEUE_AFTER_SECONDS)."""
    close_old_connections()
    return publisher.sweep()
