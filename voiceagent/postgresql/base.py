"""Django's PostgreSQL backend, plus one thing: a transaction that the next atomic block joins instead of nesting.

A request sent with `Idempotency-Key` runs in one transaction that holds both the change and its stored answer
(api/idempotency.py). The service inside opens its own atomic block, which Django would make a
SAVEPOINT ... RELEASE pair: two round trips that protect nothing here, since any exception out of the service rolls
the whole request back. Inside `joined()`, the atomic blocks opened directly at that depth take no savepoint; any
deeper one (a service's own try/except around an insert) still does.
"""

from contextlib import contextmanager

from django.db import transaction
from django.db.backends.postgresql.base import DatabaseWrapper as PostgreSQLDatabaseWrapper
from django.db.backends.postgresql.operations import DatabaseOperations as PostgreSQLDatabaseOperations

_NOT_JOINED = -1


# The audit table refuses TRUNCATE but to a session holding the purge token, which only the tables' owner can read
# (audit/migrations/0002). `flush` (the test suite between transactional tests, or an operator) runs as the owner
# and presents it for its own transaction; a role that cannot read the token still cannot flush the audit trail.
_PRESENT_AUDIT_TOKEN = """DO $$ BEGIN
    IF to_regclass('audit_purge_secret') IS NOT NULL THEN
        PERFORM set_config('audit.purge_token', (SELECT token FROM audit_purge_secret), true);
    END IF;
END $$;"""


class DatabaseOperations(PostgreSQLDatabaseOperations):
    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        statements = super().sql_flush(style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        return [_PRESENT_AUDIT_TOKEN, *statements] if "audit_event" in tables else statements


class DatabaseWrapper(PostgreSQLDatabaseWrapper):
    ops_class = DatabaseOperations
    joined_depth = _NOT_JOINED

    def savepoint(self):
        if len(self.savepoint_ids) == self.joined_depth:
            return None  # Django then marks the whole transaction for rollback on an exception, as wanted here
        return super().savepoint()

    @contextmanager
    def joined(self):
        """An atomic block whose directly nested atomic blocks are part of it, without savepoints."""
        with transaction.atomic(using=self.alias):
            outer, self.joined_depth = self.joined_depth, len(self.savepoint_ids)
            try:
                yield
            finally:
                self.joined_depth = outer
