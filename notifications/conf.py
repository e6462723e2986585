"""Sending tunables, read from settings at use time (tests override them through the environment)."""

from core.outbox import OutboxSettings

# The delays after failed attempts 1..6 (7 attempts over ~50 minutes). Short on purpose: these e-mails are about
# a caller waiting now, and an SMTP outage longer than this is better seen in the logs than mailed hours later.
DEFAULT_RETRY_SCHEDULE = (10, 30, 60, 300, 900, 1800)

# NOTIFICATION_RETRY_SCHEDULE and NOTIFICATION_REENQUEUE_AFTER_SECONDS (30 s), read as every outbox reads its own.
OUTBOX = OutboxSettings("NOTIFICATION", retry_schedule=DEFAULT_RETRY_SCHEDULE)


ERROR_KEEP_CHARS = 2000
SUBJECT_MAX_CHARS = 200
