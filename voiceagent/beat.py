"""Celery beat with no state file, safe to run on several machines at once (README "Beat").

Every entry of CELERY_BEAT_SCHEDULE has an interval of P seconds, and runs once per period `[k*P, (k+1)*P)` of
Redis's clock (periods aligned to the epoch, so a daily entry's period is a UTC day). Each beat wakes at every period
start and claims the period with `SET beat:<entry>:<k> NX PX` in Redis: the one that creates the key publishes the
task, any other finds it taken. So two beats (one per machine, or one left over by a deploy) publish each period
once, and a beat that starts on a fresh machine claims the current period at once: run already (by another beat, or
by itself before a restart), the claim fails and it waits for the next period; not run yet (a daily purge whose beat
was down at midnight), it runs now instead of a day later. PersistentScheduler kept each entry's last run in a local
file, so a beat on a new machine pushed every daily task back a day, and two beats ran everything twice.

The period is read from Redis's clock, never the machine's: beats on machines whose clocks disagree still agree on
which period it is. A claim outlives its period (by a minute at most), so a beat whose wake-up comes a little late
cannot claim a period again. Redis unreachable: nothing is published (the broker is the same Redis), and the claim is
tried again a second later. Redis losing its data (a failover before a claim reached the replica) can run a period
twice; every periodic task is idempotent.

Each message carries the period in a `beat_period` header (`<entry>:<k>`), which the tests count.
"""

import logging
import os
import socket
from datetime import timedelta

from celery.beat import ScheduleEntry, Scheduler
from redis.exceptions import RedisError

from core import counters

logger = logging.getLogger("voiceagent.beat")

RETRY_SECONDS = 1.0
CLAIM_KEPT_SECONDS = 60.0  # at most this long past the end of the period it claims


def period_seconds(entry: ScheduleEntry) -> float:
    """The entry's interval in seconds: a number or timedelta in CELERY_BEAT_SCHEDULE (celery's `schedule` wraps it).
    Crontab entries have no fixed period to claim, so the settings use none."""
    run_every = getattr(entry.schedule, "run_every", None)
    if isinstance(run_every, timedelta) and run_every.total_seconds() > 0:
        return run_every.total_seconds()
    raise ValueError(f"beat entry {entry.name!r}: only intervals (seconds or a timedelta) can be claimed per period")


class ClaimingScheduler(Scheduler):
    """Publishes each entry once per period across every beat (module docstring). Set as CELERY_BEAT_SCHEDULER;
    `--schedule` is ignored (there is no file)."""

    def __init__(self, *args, **kwargs):
        self._claimed: dict[str, int] = {}  # entry name -> the last period this beat claimed or found claimed
        self.holder = f"{socket.gethostname()}:{os.getpid()}"
        super().__init__(*args, **kwargs)

    def install_default_entries(self, data):
        """None: Celery's only default entry cleans a result backend, and no task here stores results."""

    def setup_schedule(self):
        self.merge_inplace(self.app.conf.beat_schedule)
        for entry in self.schedule.values():
            period_seconds(entry)  # refuse to start on an entry that cannot be claimed

    def tick(self, *args, **kwargs) -> float:
        """Claims and publishes every entry whose period began since it was last claimed; returns the seconds until
        the next period begins (of any entry), at most max_interval."""
        try:
            now = counters.redis_time()
        except (RedisError, OSError) as exc:
            logger.warning("beat: Redis unreachable (%s); trying again in %.0f s", type(exc).__name__, RETRY_SECONDS)
            return RETRY_SECONDS
        wait = float(self.max_interval)
        for entry in list(self.schedule.values()):
            period = period_seconds(entry)
            index = int(now // period)
            if self._claimed.get(entry.name) != index and not self._run(entry, index, period, now):
                wait = min(wait, RETRY_SECONDS)
            wait = min(wait, (index + 1) * period - now)
        # A few milliseconds past the boundary, so the next reading of Redis's clock is in the new period.
        return max(wait, 0.0) + 0.005

    def _run(self, entry: ScheduleEntry, index: int, period: float, now: float) -> bool:
        """Claims period `index` of `entry` and publishes it if the claim is ours. False: to be tried again."""
        key = f"beat:{entry.name}:{index}"
        try:
            won = counters.claim(key, self.holder, ttl=(index + 1) * period - now + min(period, CLAIM_KEPT_SECONDS))
        except (RedisError, OSError) as exc:
            logger.warning("beat: cannot claim %s (%s)", key, type(exc).__name__)
            return False
        if won:
            options = {**entry.options}
            options["headers"] = {**options.get("headers", {}), "celery_beat_task": True,
                                  "beat_period": f"{entry.name}:{index}"}
            try:
                self.app.tasks[entry.task].apply_async(entry.args, entry.kwargs, producer=self.producer, **options)
            except Exception as exc:  # noqa: BLE001 - the broker unreachable: the claim goes, to be tried again
                logger.warning("beat: could not publish %s (%s); trying again", key, type(exc).__name__)
                counters.delete(key)
                return False
            entry.last_run_at, entry.total_run_count = self.app.now(), entry.total_run_count + 1
            logger.info("beat: sent %s:%d", entry.name, index)  # the drill counts these lines
        self._claimed[entry.name] = index
        return True

    def sync(self):
        """Nothing to write: the state is the claims in Redis."""

    @property
    def info(self):
        return "    . claims: Redis (SET NX per entry and period)"

