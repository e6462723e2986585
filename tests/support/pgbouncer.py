"""The `pgbouncer` fixture: Debian's PgBouncer in transaction mode on a free loopback port in front of the test
database's server (scripts/pgbouncer.py), with few server connections, so that the transactions of different clients
share them and any state one leaves on a session (a PREPAREd statement, a setting, a lock, a held cursor) meets
another. `pooled_env(pooler)` is the environment a server or worker process reaches the test database with through
it."""

import pytest
from django.db import connection

from scripts.pgbouncer import PgBouncer, executable
from tests.support.database import connection_params, server_address


@pytest.fixture
def pgbouncer():
    if executable() is None:
        pytest.skip("pgbouncer is not installed (Debian: apt-get install pgbouncer; .ci/run installs it)")
    params = connection_params()
    with PgBouncer(server_address(), user=params.get("user") or "postgres", password=params.get("password") or "",
                   pool_size=3) as pooler:
        yield pooler


def pooled_env(pooler: PgBouncer) -> dict:
    return {"DATABASE_URL": pooler.url(connection.settings_dict["NAME"]), "DATABASE_POOLING": "transaction"}
