"""Real `celery beat` processes for tests and the drill, and what they published, read off the broker.

    beat = BeatProcess(env={...}).start()   # its own temporary working directory: no state file is shared
    ...
    beat.stop()
    published_periods(broker_url)           # {(entry name, period index): how many messages}

Each message ClaimingScheduler publishes carries its `beat_period` header ("<entry>:<index>"); messages stay on the
broker's lists while no worker consumes them (the tests run none).
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import redis

from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
QUEUES = ("deliveries", "email", "maintenance")


class BeatProcess:
    """One `celery -A voiceagent beat` in a fresh temporary directory (a fresh machine, as far as beat can tell)."""

    def __init__(self, *, env=None, settings="voiceagent.test_settings"):
        self.dir = Path(tempfile.mkdtemp(prefix="beat-"))
        self.log_path = self.dir / "beat.log"
        self.env = {**os.environ, "DJANGO_SETTINGS_MODULE": settings, "PYTHONUNBUFFERED": "1",
                    "PYTEST_XDIST_WORKER": os.environ.get("PYTEST_XDIST_WORKER", "gw0"), **(env or {})}
        self.process: subprocess.Popen | None = None

    def start(self, *, wrap: list[str] | None = None) -> "BeatProcess":
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the subprocess
        self.process = subprocess.Popen(
            [*(wrap or []), sys.executable, "-m", "celery", "-A", "voiceagent", "beat", "--loglevel", "INFO"],
            cwd=self.dir, env={**self.env, "PYTHONPATH": str(ROOT)}, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        wait_until(lambda: b"is starting." in self.log_path.read_bytes() or self.process.poll() is not None,
                   60, lambda: f"beat started:\n{self.log()}")
        if self.process.poll() is not None:
            raise RuntimeError(f"beat exited:\n{self.log()}")
        return self

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:] if self.log_path.exists() else ""


def published_periods(broker_url: str) -> Counter:
    """How many messages each (entry, period) has on the broker's queues."""
    client = redis.Redis.from_url(broker_url)
    counts: Counter = Counter()
    for queue in QUEUES:
        for raw in client.lrange(queue, 0, -1):
            period = json.loads(raw)["headers"].get("beat_period")
            if period:
                name, index = period.rsplit(":", 1)
                counts[(name, int(index))] += 1
    return counts
