"""E-mail as the tests read it: the sends a worker would make, the files Django's file backend writes (a worker
process's mail, out of reach of the locmem outbox), and a Celery worker whose mail goes to such files."""

import email
import email.policy
from pathlib import Path

from notifications.models import EmailNotification
from notifications.sender import send_notification
from tests.support.waiting import wait_until

# The callback request (a runtime event's data) whose mail the worker tests wait for.
CALLBACK = {"requested_window": "evening", "reason": "Wants to book the back room for 30 people",
            "callback_number": "+14155550177"}
SEPARATOR = b"\n" + b"-" * 79 + b"\n"  # what Django's file backend writes after each message


def send_pending() -> dict[str, str]:
    """Runs the send task's body for every pending row, as a worker would: {to_email: result}."""
    rows = EmailNotification.objects.filter(status=EmailNotification.Status.PENDING).order_by("to_email")
    return {row.to_email: send_notification(row.pk) for row in rows}


def read_mail_files(folder: Path) -> list[email.message.EmailMessage]:
    """Every message Django's file backend wrote under `folder`."""
    messages = []
    for path in sorted(folder.glob("*.log")):
        for chunk in path.read_bytes().split(SEPARATOR):
            if chunk.strip():
                messages.append(email.message_from_bytes(chunk, policy=email.policy.default))
    return messages


def wait_for_mail(folder: Path, count: int, timeout: float = 20.0) -> list[email.message.EmailMessage]:
    wait_until(lambda: len(read_mail_files(folder)) >= count, timeout,
               lambda: f"{count} messages in {folder}, found {len(read_mail_files(folder))}", interval=0.1)
    return read_mail_files(folder)


def parts(message: email.message.EmailMessage) -> tuple[str, str]:
    """(plain text, HTML) of a message."""
    return (message.get_body(("plain",)).get_content(), message.get_body(("html",)).get_content())


def start_mail_worker(factory, mail_dir, *, fail_first=0, beat=False, **options):
    """A Celery worker (`factory`: the celery_worker_factory fixture) whose mail goes to files under `mail_dir`
    (mail_worker_settings.py), its first `fail_first` sends failing like a dropped SMTP connection."""
    return factory(beat=beat, **options, env={
        "DJANGO_SETTINGS_MODULE": "tests.support.mail_worker_settings",
        "TEST_EMAIL_BACKEND": "tests.support.mail_backends.FlakyFileBackend",
        "TEST_EMAIL_FILE_PATH": str(mail_dir),
        "TEST_EMAIL_FAIL_FIRST": str(fail_first),
        "NOTIFICATION_RETRY_SCHEDULE": "0.5,0.5,0.5",
        "NOTIFICATION_SWEEP_INTERVAL_SECONDS": "0.5",
    })
