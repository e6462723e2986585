"""Which user PgBouncer runs as (scripts/pgbouncer.py): started as root it must drop to a user that may open the
server's socket: the owner of the socket's directory (the embedded server's admits no one else), or `postgres` for a
TCP server or a directory root owns (such as /tmp, which admits everyone)."""

import os
import pwd

import pytest

from scripts.pgbouncer import PgBouncer


def test_in_front_of_a_socket_in_a_users_directory_pgbouncer_runs_as_that_user(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("only root can give a directory to another user")
    nobody = pwd.getpwnam("nobody")
    os.chown(tmp_path, nobody.pw_uid, nobody.pw_gid)
    pooler = PgBouncer(f"{tmp_path}/.s.PGSQL.5432", user="postgres")
    assert pooler.system_user == "nobody"
    assert "user = nobody\n" in pooler._config()


def test_in_front_of_tcp_or_a_socket_in_a_directory_of_root_pgbouncer_runs_as_postgres():
    for target in (("127.0.0.1", 5432), "/tmp/.s.PGSQL.5432"):
        pooler = PgBouncer(target, user="postgres")
        assert pooler.system_user == "postgres"
        if os.geteuid() == 0:
            assert "user = postgres\n" in pooler._config()
