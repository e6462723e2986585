"""Windows that open at their first hit: a burst cannot straddle a clock boundary and get twice its limit, and the
wait they report is what is left of the window."""

import time
import uuid

from voiceagent import counters


def test_a_window_opens_at_its_first_hit_and_counts_on_across_clock_boundaries(db):
    name = f"test-window:{uuid.uuid4().hex}"
    assert counters.hit_window(name, seconds=60) == (1, 60)
    count, wait = counters.hit_window(name, seconds=60)
    assert count == 2 and 1 <= wait <= 60


def test_the_window_closes_after_its_seconds(db):
    name = f"test-window:{uuid.uuid4().hex}"
    counters.hit_window(name, seconds=1)
    counters.hit_window(name, seconds=1)
    time.sleep(1.1)
    assert counters.hit_window(name, seconds=1) == (1, 1)


def test_without_redis_this_process_keeps_the_same_window(db, monkeypatch):
    name = f"test-window:{uuid.uuid4().hex}"
    monkeypatch.setattr(counters, "_down_until", time.monotonic() + 60)
    try:
        assert counters.hit_window(name, seconds=30) == (1, 30)
        count, wait = counters.hit_window(name, seconds=30)
        assert count == 2 and 29 <= wait <= 30
    finally:
        counters.reset()


def test_the_epoch_script_survives_a_redis_that_forgot_it(db):
    """A restarted Redis has no scripts: the first call loads it again, nothing fails."""
    flag, counter = f"test-epoch:{uuid.uuid4().hex}", f"test-count:{uuid.uuid4().hex}"
    first = counters.epoch_and_count(flag, counter, mode="hit", ttl=60)
    counters._client().script_flush()
    assert counters.epoch_and_count(flag, counter, mode="hit", ttl=60) == (first[0], 2, None)
    assert counters.epoch_and_count(flag, counter, mode="peek", ttl=60) == (first[0], 2, None)
    assert counters.bump(flag) and counters.epoch_and_count(flag)[0] != first[0]


def test_the_counting_script_claims_once_and_never_over_the_limit(db):
    flag, counter, name = (f"test-{part}:{uuid.uuid4().hex}" for part in ("epoch", "count", "claim"))
    claim = counters.Claim(name, "running", 60_000, limit=2)
    assert counters.epoch_and_count(flag, counter, mode="hit", ttl=60, claim=claim)[1:] == (1, "")
    assert counters.epoch_and_count(flag, counter, mode="hit", ttl=60, claim=claim)[1:] == (2, "running")
    counters.delete(name)
    assert counters.epoch_and_count(flag, counter, mode="hit", ttl=60, claim=claim)[1:] == (3, None)  # over: untried
    assert counters.epoch_and_count(flag, counter, mode="peek", ttl=60, claim=claim)[1:] == (3, None)
