"""A test's own PostgreSQL connections, built from the settings Django itself connects with (a host and port, or
the embedded server's Unix socket in OPTIONS, user, password, sslmode...): never from HOST/PORT alone, which on a bare
machine would reach another server or none."""

from urllib.parse import quote

import psycopg
from django.db import connections

# What Django's backend adds for its own cursors; libpq knows none of them.
_DJANGO_ONLY = ("cursor_factory", "context", "prepare_threshold")


def connection_params(alias: str = "default") -> dict:
    """psycopg.connect() keyword arguments for the database the alias uses now (the test database in a test)."""
    params = connections[alias].get_connection_params()
    for name in _DJANGO_ONLY:
        params.pop(name, None)
    return params


def connect(alias: str = "default", **overrides) -> psycopg.Connection:
    """A connection of the caller's own (it closes it), outside Django's transaction handling."""
    return psycopg.connect(**{**connection_params(alias), **overrides})


def server_address(alias: str = "default") -> tuple[str, int] | str:
    """Where the alias's server listens: (host, port), or the path of its Unix socket. Read from a connection libpq
    actually made, so its defaults (PGHOST, the compiled-in socket directory) count as they do for Django."""
    with connect(alias) as conn:
        host, port = conn.info.host, conn.info.port
    if host.startswith("/"):
        return f"{host}/.s.PGSQL.{port}"
    return host, port


def settings_through(host: str, port: int, alias: str = "default") -> dict:
    """The alias's settings_dict aimed at host:port instead (a forwarder), its socket options dropped."""
    settings_dict = connections[alias].settings_dict
    options = {k: v for k, v in settings_dict["OPTIONS"].items() if k not in ("host", "hostaddr", "port", "service")}
    return {**settings_dict, "HOST": host, "PORT": str(port), "OPTIONS": options}


def database_url_through(host: str, port: int, alias: str = "default") -> str:
    """A DATABASE_URL for the alias's database (the test database in a test) reached at host:port (a forwarder, a
    pooler), for a server or worker process the test starts."""
    params = connection_params(alias)
    user = params.get("user") or ""
    password = f":{quote(params['password'], safe='')}" if params.get("password") else ""
    return f"postgres://{quote(user, safe='')}{password}@{host}:{port}/{quote(params['dbname'], safe='')}"
