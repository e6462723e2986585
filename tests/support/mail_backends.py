"""Test e-mail backends that fail at the true edge: the backend's send raises what smtplib raises when the
server drops the connection, for the first N sends, then behaves like the backend it extends.

N comes from settings (`TEST_EMAIL_FAIL_FIRST`, set from the environment by mail_worker_settings.py for a worker
process). The count of sends tried is kept in a file under EMAIL_FILE_PATH for the file backend, so every
process of a prefork worker shares it; the locmem variant (one process) counts in memory.
"""

import fcntl
import smtplib
from pathlib import Path

from django.conf import settings
from django.core.mail.backends import filebased, locmem


def _fail_first() -> int:
    return int(getattr(settings, "TEST_EMAIL_FAIL_FIRST", 0) or 0)


def _refuse(tried: int) -> None:
    raise smtplib.SMTPServerDisconnected(f"test backend: connection unexpectedly closed (send #{tried + 1})")


class FlakyFileBackend(filebased.EmailBackend):
    """The file backend (one file per send; each of our sends opens its own connection), failing the first N."""

    def send_messages(self, email_messages):
        counter = Path(self.file_path) / "sends-tried.count"
        with open(counter, "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.seek(0)
            tried = len(handle.read())
            handle.write("x")
        if tried < _fail_first():
            _refuse(tried)
        return super().send_messages(email_messages)


class FlakyLocmemBackend(locmem.EmailBackend):
    """Django's locmem backend (mail.outbox), failing the first N sends of this process (reset per test)."""

    tried = 0

    def send_messages(self, email_messages):
        tried, FlakyLocmemBackend.tried = FlakyLocmemBackend.tried, FlakyLocmemBackend.tried + 1
        if tried < _fail_first():
            _refuse(tried)
        return super().send_messages(email_messages)
