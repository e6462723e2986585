"""Whether a database failure means "PostgreSQL cannot be reached right now" (a restart, a failover, a pooler with no
server): the request could not be served by this node at this moment and may be retried in a moment, so it answers
503 with `Retry-After` rather than 500 (api/errors.py, voiceagent/middleware.py, the 500 handler).

Only connection-level failures count: no connection could be made (no SQLSTATE), the connection broke (class 08,
and PgBouncer reports its own failures as 08P01), the server is shutting down or starting up (57P01 - 57P03), or it
has no free connection slot (53300). A failure a query caused itself (a constraint, a deadlock, a timeout) stays
what it was."""

import psycopg
from django.db import utils as django_db

# Seconds a client is told to wait: a PostgreSQL restart or a managed failover takes a few.
RETRY_AFTER_SECONDS = 2

_SHUTDOWN_STATES = {"57P01", "57P02", "57P03", "53300"}


def _cause_chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def unreachable(exc: BaseException | None) -> bool:
    """Whether `exc` (or what it wraps: Django wraps psycopg's errors) says PostgreSQL cannot be reached."""
    for error in _cause_chain(exc):
        if isinstance(error, psycopg.Error):
            state = error.sqlstate
            if isinstance(error, (psycopg.OperationalError, psycopg.InterfaceError)) and state is None:
                return True
            return bool(state) and (state.startswith("08") or state in _SHUTDOWN_STATES)
        if isinstance(error, django_db.InterfaceError) and error.__cause__ is None:
            return True  # Django's own "connection already closed": the server went away under a kept connection
    return False
