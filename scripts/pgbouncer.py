"""Debian's PgBouncer in transaction mode on a free loopback port, in front of a PostgreSQL server: what the tests
(marker `pgbouncer`), the bench and the cluster drill put between the service and its database, as most managed
PostgreSQL offerings do.

    with PgBouncer(("127.0.0.1", 5432), user="postgres") as pooler:   # or the path of a server's Unix socket
        url = pooler.url("mydb")                                       # DATABASE_URL through it

    python scripts/pgbouncer.py --target-url postgres://postgres@127.0.0.1:5432/x   # runs until interrupted

Every database name is passed through to the server (a `*` entry), logged in as `user`; clients are not
authenticated (`auth_type = any`: loopback only). Started as root, PgBouncer (which refuses to run as root) drops to
the `postgres` user, or, in front of a Unix socket in a directory a user other than root owns, to that user (the
embedded server's directory admits no one else).
"""

import argparse
import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def executable() -> str | None:
    """PgBouncer's binary (Debian installs it in /usr/sbin, which a user's PATH may lack), or None."""
    return shutil.which("pgbouncer") or next(
        (path for path in ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer") if os.access(path, os.X_OK)), None)


class PgBouncer:
    def __init__(self, target: tuple[str, int] | str, *, user: str, password: str = "", pool_mode: str = "transaction",
                 pool_size: int = 8, port: int | None = None):
        """target: (host, port), or the path of the server's Unix socket (`<dir>/.s.PGSQL.<port>`)."""
        self.system_user = "postgres"
        if isinstance(target, str):
            directory, _, name = target.rpartition("/")
            self.server_host, self.server_port = directory, int(name.rsplit(".", 1)[1])
            owner = os.stat(directory).st_uid
            if owner != 0:  # a shared directory such as /tmp admits `postgres`
                self.system_user = pwd.getpwuid(owner).pw_name
        else:
            self.server_host, self.server_port = target
        self.user, self.password = user, password
        self.pool_mode, self.pool_size = pool_mode, pool_size
        self.port = port or _free_port()
        self.process: subprocess.Popen | None = None
        self.directory = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
        self.log_path = self.directory / "pgbouncer.log"

    def url(self, database: str) -> str:
        """A DATABASE_URL for `database` through the pooler."""
        return f"postgres://{quote(self.user, safe='')}@127.0.0.1:{self.port}/{quote(database, safe='')}"

    def _config(self) -> str:
        password = f" password={self.password}" if self.password else ""
        lines = [
            "[databases]",
            f"* = host={self.server_host} port={self.server_port} user={self.user}{password}",
            "[pgbouncer]",
            "listen_addr = 127.0.0.1",
            f"listen_port = {self.port}",
            "unix_socket_dir =",
            "auth_type = any",
            f"pool_mode = {self.pool_mode}",
            f"default_pool_size = {self.pool_size}",
            "max_client_conn = 1000",
            # What libpq and psycopg may send at start-up that PgBouncer does not track itself.
            "ignore_startup_parameters = extra_float_digits,options",
            "server_reset_query =",
            "log_connections = 0",
            "log_disconnections = 0",
            "log_pooler_errors = 1",
        ]
        if os.geteuid() == 0:
            lines.append(f"user = {self.system_user}")
        return "\n".join(lines) + "\n"

    def start(self) -> "PgBouncer":
        binary = executable()
        if binary is None:
            raise RuntimeError("pgbouncer is not installed (Debian: apt-get install pgbouncer)")
        config = self.directory / "pgbouncer.ini"
        config.write_text(self._config())
        if os.geteuid() == 0:  # the dropped user reads its config and writes nothing else here
            owner = pwd.getpwnam(self.system_user)
            os.chown(self.directory, owner.pw_uid, owner.pw_gid)
            os.chown(config, owner.pw_uid, owner.pw_gid)
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen([binary, str(config)], stdout=self._log, stderr=subprocess.STDOUT,  # noqa: S603
                                        start_new_session=True)
        deadline = time.monotonic() + 20
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"pgbouncer did not start:\n{self.log()}")
            time.sleep(0.05)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # PgBouncer's immediate shutdown
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None
        with contextlib.suppress(AttributeError):
            self._log.close()

    def __enter__(self) -> "PgBouncer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


def from_url(url: str, **options) -> PgBouncer:
    """A PgBouncer in front of the server a DATABASE_URL names (host and port, or `?host=<socket dir>`)."""
    parts = urlsplit(url)
    query = dict(pair.split("=", 1) for pair in parts.query.split("&") if "=" in pair)
    host = unquote(query.get("host", parts.hostname or "127.0.0.1"))
    port = parts.port or int(query.get("port", 5432))
    target = f"{host}/.s.PGSQL.{port}" if host.startswith("/") else (host, port)
    return PgBouncer(target, user=unquote(parts.username or "postgres"), password=unquote(parts.password or ""),
                     **options)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target-url", default=os.environ.get("DATABASE_URL", ""))
    parser.add_argument("--port", type=int)
    parser.add_argument("--pool-size", type=int, default=8)
    args = parser.parse_args()
    pooler = from_url(args.target_url, port=args.port, pool_size=args.pool_size)
    with pooler:
        print(f"pgbouncer (transaction mode) on 127.0.0.1:{pooler.port}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.sigwait({signal.SIGINT, signal.SIGTERM})
    return 0


if __name__ == "__main__":
    sys.exit(main())
