"""Sending tunables, read from settings at use time (tests override them through the environment)."""

from django.conf import settings

# The delays after failed attempts 1..6 (7 attempts over ~50 minutes). Short on purpose: these e-mails are about
# a caller waiting now, and an SMTP outage longer than this is better seen in the logs than mailed hours later.
DEFAULT_RETRY_SCHEDULE = (10, 30, 60, 300, 900, 1800)


def retry_schedule() -> tuple[float, ...]:
    return tuple(getattr(settings, "NOTIFICATION_RETRY_SCHEDULE", None) or DEFAULT_RETRY_SCHEDULE)


def max_attempts() -> int:
    return len(retry_schedule()) + 1


def reenqueue_after_seconds() -> float:
    """A due row enqueued longer ago than this and still pending is presumed lost by the broker; sweep it again."""
    return float(getattr(settings, "NOTIFICATION_REENQUEUE_AFTER_SECONDS", 30))


ERROR_KEEP_CHARS = 2000
SUBJECT_MAX_CHARS = 200
