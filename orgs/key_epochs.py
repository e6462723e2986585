"""When a process may stop trusting the API keys it keeps in memory.

/v1 authentication keeps each key it has read from PostgreSQL (with its organization) in a per-process cache, and
trusts an entry only while the key's epoch in Redis, read in the same round trip as the rate-limit count, is the one
it saw when it read the row. A revocation, or a change to the organization the entry carries, gives the key a new
epoch after the change commits and before the service returns, so the very next request in every process reads
PostgreSQL again.

If Redis cannot be reached at that moment, processes cannot validate anything either and authenticate from
PostgreSQL; the new epoch is written as soon as Redis answers (retried in the background), so no process goes back
to an old entry for a key that changed while Redis was away.
"""

import logging
import threading
import time

from django.db import transaction

from core import counters

logger = logging.getLogger("orgs.key_epochs")
RETRY_EVERY_SECONDS = 0.25
RETRY_FOR_SECONDS = 600


def flag(digest: str) -> str:
    return f"keyepoch:{digest}"


def keys_changed(digests) -> None:
    """Gives these keys new epochs now and again once the current transaction commits. Now: a process that reads
    the change in this transaction (or in a test's) sees it at once. After the commit: a process that read the row
    between the two bumps cached it with the first bump's epoch, which the second one retires."""
    flags = [flag(digest) for digest in digests]
    if flags:
        counters.bump(*flags)
        transaction.on_commit(lambda: _bump(flags), robust=False)


def _bump(flags: list[str]) -> None:
    if not counters.bump(*flags):
        threading.Thread(target=_retry, args=(flags,), name="key-epoch-retry", daemon=True).start()


def _retry(flags: list[str]) -> None:
    deadline = time.monotonic() + RETRY_FOR_SECONDS
    while time.monotonic() < deadline:
        time.sleep(RETRY_EVERY_SECONDS)  # bump() itself tries Redis only when the breaker lets it (once a second)
        if counters.bump(*flags):
            logger.info("Key epochs written after Redis came back (%d keys)", len(flags))
            return
    logger.error("Key epochs could not be written for %d s: processes that cached these keys before Redis "
                 "went away may trust them until their epochs expire", RETRY_FOR_SECONDS)
