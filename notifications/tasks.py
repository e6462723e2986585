"""Celery tasks: `send` (one EmailNotification id, idempotent) and `sweep` (beat: enqueue what is due)."""

from celery import shared_task
from django.db import close_old_connections


@shared_task(name="notifications.send", ignore_result=True)
def send(notification_id: str) -> str:
    """Sends one notification e-mail if it is pending and due; a duplicate run is a no-op (see sender)."""
    from .sender import send_notification

    close_old_connections()  # connections are reused across tasks (CELERY_DB_REUSE_MAX); drop broken or old ones
    return send_notification(notification_id)


@shared_task(name="notifications.sweep", ignore_result=True)
def sweep() -> int:
    """Enqueues due e-mails: retries whose time came, and sends the broker lost."""
    from .sender import sweep_due

    close_old_connections()
    return sweep_due()
