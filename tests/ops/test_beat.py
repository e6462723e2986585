"""Beat on many machines (voiceagent/beat.py): two real `celery beat` processes running together publish each
periodic task once per period, and a beat started in a fresh directory (no state file: a new machine) keeps the
schedule: what ran this period does not run again, what did not run yet runs at once."""

from collections import Counter

import pytest
import redis as redis_client
from django.conf import settings

from tests.support.beat import BeatProcess, published_periods
from tests.support.celery_worker import RedisServer
from tests.support.waiting import wait_until
from voiceagent.beat import ClaimingScheduler, period_seconds
from voiceagent.celery import app

pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("cluster")]

PERIODS = 6
SHORT = "webhooks-sweep"  # every second under tests/ops/beat_settings.py
DAILY = ("webhooks-purge-delivery-log", "api-purge-idempotency-keys", "audit-purge")


@pytest.fixture
def redis_server():
    server = RedisServer().start()
    yield server
    server.stop()


def broker_of(server: RedisServer) -> str:
    """The broker db the test settings give a process whose REDIS_URL is this server's."""
    return settings.CELERY_BROKER_URL.replace(settings.REDIS_URL.rsplit("/", 1)[0], server.url.rsplit("/", 1)[0])


def beat(server: RedisServer) -> BeatProcess:
    return BeatProcess(env={"REDIS_URL": server.url}, settings="tests.ops.beat_settings")


def periods_of(counts: Counter, name: str) -> list[int]:
    return sorted(index for entry, index in counts if entry == name)


def test_every_periodic_task_has_an_expiry_and_time_limits():
    scheduler = ClaimingScheduler(app=app, lazy=True)
    scheduler.setup_schedule()
    assert set(scheduler.schedule) == set(settings.CELERY_BEAT_SCHEDULE)
    for name, entry in scheduler.schedule.items():
        options = entry.options
        # Within its period, or the minute worker clocks may disagree by (Celery reads expiry on the worker's clock).
        assert options["expires"] == max(period_seconds(entry), settings.PERIODIC_EXPIRES_AT_LEAST), name
        assert 0 < options["soft_time_limit"] < options["time_limit"], name


def test_two_beats_publish_each_periodic_task_once_per_period(redis_server):
    broker = broker_of(redis_server)
    beats = [beat(redis_server).start(), beat(redis_server).start()]
    try:
        # Both running together for PERIODS periods of the every-second entries.
        first = wait_until(lambda: periods_of(published_periods(broker), SHORT), 30, "a first period")[0]
        wait_until(lambda: max(periods_of(published_periods(broker), SHORT)) >= first + PERIODS, 30,
                   lambda: f"{PERIODS} periods:\n{beats[0].log()}\n{beats[1].log()}")
        assert all(process.process.poll() is None for process in beats)  # both ran all along
    finally:
        for process in beats:
            process.stop()
    counts = published_periods(broker)
    assert counts and set(counts.values()) == {1}, {key: n for key, n in counts.items() if n != 1}
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        indexes = periods_of(counts, name)
        if entry["schedule"] >= settings.DAY:
            assert len(indexes) == 1, (name, indexes)  # today's, once
        else:
            # Every period from the first to the last, none skipped.
            assert indexes == list(range(indexes[0], indexes[-1] + 1)), (name, indexes)
            assert len(indexes) >= PERIODS, (name, indexes)


def test_a_beat_restarted_on_a_fresh_machine_keeps_the_schedule(redis_server):
    broker = broker_of(redis_server)
    cache = redis_client.Redis.from_url(settings.CACHES["default"]["LOCATION"].replace(
        settings.REDIS_URL.rsplit("/", 1)[0], redis_server.url.rsplit("/", 1)[0]))
    first = beat(redis_server).start()
    try:
        wait_until(lambda: len(periods_of(published_periods(broker), SHORT)) >= 3, 30, first.log)
    finally:
        first.stop()
    before = published_periods(broker)
    assert all(len(periods_of(before, name)) == 1 for name in DAILY), before
    # One daily run did not happen (say its beat was down at midnight): its claim is not there.
    missed = DAILY[0]
    assert cache.delete(*cache.keys(f"*beat:{missed}:*")) == 1
    second = beat(redis_server).start()  # another directory: no file of the first beat's
    try:
        last = max(periods_of(before, SHORT))
        wait_until(lambda: max(periods_of(published_periods(broker), SHORT)) >= last + 3, 30, second.log)
    finally:
        second.stop()
    after = published_periods(broker)
    day = periods_of(before, missed)[0]
    # The missed daily run ran at once (not a day later: the second beat's publish is the second message of that
    # period; the first beat's is the one we had it forget); the others, run today already, did not run again.
    assert after.pop((missed, day)) == 2
    assert set(after.values()) == {1}, {key: n for key, n in after.items() if n != 1}
    for name in DAILY[1:]:
        assert periods_of(after, name) == periods_of(before, name), name
