"""Sending one notification e-mail, at most once per success (`send_notification`, the `notifications.send` task's
body, or `send_inline` in a process that already is a worker); and which e-mails are due (`due_notifications`,
what the sweep publishes).

`send_notification` locks the row (SELECT ... FOR UPDATE), skips it unless it is pending and due, sends it
through Django's e-mail framework, and marks it sent in the same transaction. A second task for the same row
waits on the lock, then finds it sent and does nothing, so a retried or duplicated task never mails twice.
A failed send (SMTP refused, connection dropped, timeout) schedules the next attempt by a due time in the
database; the beat sweep enqueues it then. The one case that can mail twice is a crash between the SMTP
server's acceptance and our commit; no protocol can close that gap, and a duplicate beats a lost callback.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models.functions import Now
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from core import dbclock
from core.links import invitation_url, password_reset_url
from orgs.invitations import token_for

from . import conf
from .content import INVITATION_LINK, PASSWORD_RESET_LINK
from .models import EmailNotification, Kind

logger = logging.getLogger("notifications")


def _reset_account(row: EmailNotification):
    """The account a reset mail is for, found now (the request that queued it did not look): the active user with
    a usable password at that address, as Django's PasswordResetForm mails; None when there is none."""
    users = get_user_model()._default_manager.filter(email__iexact=row.to_email, is_active=True).order_by("pk")
    return next((user for user in users if user.has_usable_password()), None)


def _links(row: EmailNotification, text: str, account=None) -> str:
    """An invitation's link, derived now from the invitation id and nonce in `source`, and a reset link, made now
    for `account` (never stored)."""
    if row.kind == Kind.PASSWORD_RESET:
        uid, token = urlsafe_base64_encode(force_bytes(account.pk)), default_token_generator.make_token(account)
        return text.replace(PASSWORD_RESET_LINK, password_reset_url(uid, token))
    if row.kind != Kind.INVITATIONS:
        return text
    _, invitation_id, nonce = row.source.split(":")
    return text.replace(INVITATION_LINK, invitation_url(invitation_id, token_for(invitation_id, nonce)))


def _message(row: EmailNotification, account=None) -> EmailMultiAlternatives:
    message = EmailMultiAlternatives(
        subject=row.subject,
        body=_links(row, row.body_text, account),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[row.to_email],
        headers={
            "X-Notification-Id": str(row.pk),  # lets a mail system (and our tests) spot a duplicate
            "Auto-Submitted": "auto-generated",  # RFC 3834: no vacation replies to a robot
        },
    )
    message.attach_alternative(_links(row, row.body_html, account), "text/html")
    return message


def send_notification(notification_id) -> str:
    """One try at sending a notification e-mail. Returns what happened (for tests and logs):
    "skipped" (missing, sent or failed), "not_due", "sent", "retry", "failed" (attempts used up) or "dropped" (a
    reset mail for an address no account has: the row is deleted, nothing is sent or kept).

    Holds the row's lock from before the send until the result is committed; SMTP is bounded by EMAIL_TIMEOUT.
    """
    with transaction.atomic():
        row = EmailNotification.objects.select_for_update().filter(pk=notification_id).first()
        if row is None or row.status != EmailNotification.Status.PENDING:
            return "skipped"
        now = dbclock.now()  # due and retry times are PostgreSQL's, whatever this worker's clock says
        if row.next_attempt_at is not None and row.next_attempt_at > now:
            return "not_due"
        account = None
        if row.kind == Kind.PASSWORD_RESET:
            account = _reset_account(row)
            if account is None:
                row.delete()
                return "dropped"
        row.attempts += 1
        row.enqueued_at = None
        try:
            _message(row, account).send(fail_silently=False)
        except Exception as exc:  # noqa: BLE001 - every transport failure is retried the same way
            row.last_error = f"{type(exc).__name__}: {exc}"[: conf.ERROR_KEEP_CHARS]
            if row.attempts >= conf.OUTBOX.max_attempts():
                row.status = EmailNotification.Status.FAILED
                row.next_attempt_at = None
                result = "failed"
                logger.error("notifications: gave up on %s to %s after %d attempts: %s",
                             row.pk, row.to_email, row.attempts, row.last_error)
            else:
                delay = conf.OUTBOX.retry_schedule()[row.attempts - 1]
                row.next_attempt_at = now + timedelta(seconds=delay)
                result = "retry"
                logger.warning("notifications: sending %s failed (attempt %d), next in %gs: %s",
                               row.pk, row.attempts, delay, row.last_error)
        else:
            row.status = EmailNotification.Status.SENT
            row.sent_at = dbclock.now()
            row.next_attempt_at = None
            result = "sent"
        row.save(update_fields=[
            "status", "attempts", "last_error", "next_attempt_at", "enqueued_at", "sent_at", "updated_at",
        ])
        return result


def send_inline(notification_ids: list[str]) -> None:
    """Sends the rows in this process (for code that already runs in a Celery worker). Never raises: a row
    that fails stays pending with its next attempt scheduled, and the sweep takes it from there."""
    for notification_id in notification_ids:
        try:
            send_notification(notification_id)
        except Exception:  # noqa: BLE001 - a database hiccup here must not fail the worker's own task
            logger.exception("notifications: inline send of %s failed; the sweep will retry", notification_id)


def due_notifications():
    """Pending e-mails that are due: new ones, and retries whose time came (the sweep's candidates)."""
    return EmailNotification.objects.filter(
        status=EmailNotification.Status.PENDING, next_attempt_at__lte=Now()
    )
