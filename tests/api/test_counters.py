"""Windows that open at their first hit: a burst cannot straddle a clock boundary and get twice its limit, and the
wait they report is what is left of the window."""

import time
import uuid

from core import counters
from tests.support.waiting import wait_until


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


def _left(states):
    return [(state.allowed, state.remaining) for state in states]


def test_the_epoch_script_survives_a_redis_that_forgot_it(db):
    """A restarted Redis has no scripts: the first call loads it again, nothing fails."""
    flag = f"test-epoch:{uuid.uuid4().hex}"
    rate = counters.Rate(f"test-rate:{uuid.uuid4().hex}", 3)
    first = counters.epoch_and_count(flag, (rate,), mode="hit")
    counters._client().script_flush()
    token, states, claimed = counters.epoch_and_count(flag, (rate,), mode="hit")
    assert (token, _left(states), claimed) == (first[0], [(True, 1)], None)
    assert _left(counters.epoch_and_count(flag, (rate,), mode="peek")[1]) == [(True, 1)]
    assert counters.bump(flag) and counters.epoch_and_count(flag)[0] != first[0]


def test_the_counting_script_claims_once_and_never_when_refused(db):
    flag, name = f"test-epoch:{uuid.uuid4().hex}", f"test-claim:{uuid.uuid4().hex}"
    rate = counters.Rate(f"test-rate:{uuid.uuid4().hex}", 2)
    claim = counters.Claim(name, "running", 60_000)
    assert counters.epoch_and_count(flag, (rate,), mode="hit", claim=claim)[2] == ""
    assert counters.epoch_and_count(flag, (rate,), mode="hit", claim=claim)[2] == "running"
    counters.delete(name)
    _, states, claimed = counters.epoch_and_count(flag, (rate,), mode="hit", claim=claim)
    assert (_left(states), claimed) == ([(False, 0)], None)  # refused: untried
    assert counters.epoch_and_count(flag, (rate,), mode="peek", claim=claim)[2] is None


def test_every_limiter_admits_a_request_or_none_is_moved(db):
    flag = f"test-epoch:{uuid.uuid4().hex}"
    tight, loose = counters.Rate(f"test-a:{uuid.uuid4().hex}", 2), counters.Rate(f"test-b:{uuid.uuid4().hex}", 5)
    assert _left(counters.epoch_and_count(flag, (tight, loose), mode="hit")[1]) == [(True, 1), (True, 4)]
    assert _left(counters.epoch_and_count(flag, (tight, loose), mode="hit")[1]) == [(True, 0), (True, 3)]
    # The tight one refuses: the loose one keeps what it had.
    states = counters.epoch_and_count(flag, (tight, loose), mode="hit")[1]
    assert _left(states) == [(False, 0), (True, 3)]
    assert 1 <= states[0].retry_after <= 30 and states[1].retry_after == 0
    assert _left(counters.epoch_and_count(flag, (loose,), mode="peek")[1]) == [(True, 3)]


def test_a_burst_gets_the_limit_then_one_more_per_step(db):
    """GCRA: a burst of `limit`, then one more each period/limit; `reset` is when it is full again."""
    flag = f"test-epoch:{uuid.uuid4().hex}"
    rate = counters.Rate(f"test-rate:{uuid.uuid4().hex}", 4, period_ms=2000)  # one more every 0.5 s
    states = [counters.epoch_and_count(flag, (rate,), mode="hit")[1][0] for _ in range(5)]
    assert [(s.allowed, s.remaining) for s in states] == [(True, 3), (True, 2), (True, 1), (True, 0), (False, 0)]
    assert states[3].reset == 2 and states[4].retry_after == 1
    wait_until(lambda: counters.epoch_and_count(flag, (rate,), mode="peek")[1][0].remaining, 10, "a place back")
    assert counters.epoch_and_count(flag, (rate,), mode="hit")[1][0].allowed


def test_without_redis_this_process_runs_the_same_limiters(db, monkeypatch):
    flag = f"test-epoch:{uuid.uuid4().hex}"
    tight, loose = counters.Rate(f"test-a:{uuid.uuid4().hex}", 2), counters.Rate(f"test-b:{uuid.uuid4().hex}", 5)
    monkeypatch.setattr(counters, "_down_until", time.monotonic() + 60)
    try:
        results = [counters.epoch_and_count(flag, (tight, loose), mode="hit") for _ in range(3)]
        assert [token for token, _, _ in results] == [None] * 3
        assert [_left(states) for _, states, _ in results] == [
            [(True, 1), (True, 4)], [(True, 0), (True, 3)], [(False, 0), (True, 3)]]
    finally:
        counters.reset()
