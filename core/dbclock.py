"""One clock for the whole fleet: PostgreSQL's. Leases, in-flight counts, rate caps, sweep cut-offs and retry times
are shared decisions, so they are made in SQL with now() wherever a statement makes them (the webhook claim, the
sweeps). What a worker must compute itself between statements (the due time of a retry, a 429's pause) uses this
process's clock corrected by PostgreSQL's: the offset is measured from the now() every webhook claim returns, and
once by a query of its own before any claim. A worker whose clock runs ahead or behind then decides as if it did
not (tests/webhooks/test_one_clock.py runs one 30 s ahead). Only the round trip's latency (milliseconds) remains."""

import threading
import time
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

_offset: timedelta | None = None  # PostgreSQL's clock minus this process's
_measured_at = 0.0  # time.monotonic() of the last measurement
_lock = threading.Lock()
# A process that never claims (a web worker) measures again this often: a clock stepped by NTP meanwhile counts.
REMEASURE_SECONDS = 300.0


def observe(database_now: datetime, *, local_now: datetime | None = None) -> None:
    """Records what PostgreSQL's clock said (a now() a statement returned) against this process's at receipt."""
    global _offset, _measured_at
    _offset = database_now - (local_now or timezone.now())
    _measured_at = time.monotonic()


def offset() -> timedelta:
    """PostgreSQL's clock minus this process's, measured now if no statement has told it yet."""
    if _offset is None or time.monotonic() - _measured_at > REMEASURE_SECONDS:
        with _lock:
            if _offset is None or time.monotonic() - _measured_at > REMEASURE_SECONDS:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT clock_timestamp()")
                    observe(cursor.fetchone()[0])
    return _offset


def now() -> datetime:
    """The time on PostgreSQL's clock, as far as this process can tell without a round trip."""
    return timezone.now() + offset()


def reset() -> None:
    """Forgets the offset (tests)."""
    global _offset
    _offset = None
