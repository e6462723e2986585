"""Every key a counter path creates gets its expiry in the same step (issue 38 item 9). Two steps (`SET NX EX` then
`INCR`, or `ZADD` then `EXPIRE`) leave a key that expires between them re-created without an expiry: a brake that
never lifts. A proxy runs each path's commands one at a time and deletes the path's keys between two of them, as
their expiry would at the worst moment; afterwards no key of the path may live without an expiry."""

import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from django.conf import settings
from django.test import override_settings

from core import counters
from tests.support.resp_proxy import SteppingRedisProxy


def _names(*names: str) -> list[str]:
    return [f"{name}:{uuid.uuid4().hex}" for name in names]


def _hit():
    (name,) = _names("t-hit")
    return [name], lambda: counters.hit(name, ttl=60)


def _hit_window():
    (name,) = _names("t-window")
    return [name], lambda: counters.hit_window(name, seconds=60)


def _recent_add():
    (name,) = _names("t-recent")
    return [name], lambda: counters.recent_add(name, uuid.uuid4().hex, max_age=60)


def _take_slots():
    own, shared, recent = _names("t-own", "t-shared", "t-seen")
    share = counters.Share(recent, "tenant", 60)
    return [own, shared, recent], lambda: counters.take_slots([(own, 50), (shared, 100)], ttl=30, share=share)


def _release_slots():
    own, shared, recent = _names("t-own", "t-shared", "t-seen")
    share = counters.Share(recent, "tenant", 60)

    def run():
        holder = counters.take_slots([(own, 50), (shared, 100)], ttl=30, share=share)
        counters.release_slots([own, shared], holder, share=share)

    return [own, shared, recent], run


def _renew_slots():
    own, shared = _names("t-own", "t-shared")

    def run():
        holder = counters.take_slots([(own, 50), (shared, 100)], ttl=30)
        counters.renew_slots([own, shared], holder, ttl=30)

    return [own, shared], run


def _epoch_and_count():
    flag, rate, claim = _names("t-flag", "t-rate", "t-claim")
    return [flag, rate, claim], lambda: counters.epoch_and_count(
        flag, (counters.Rate(rate, 1000),), mode="hit", claim=counters.Claim(claim, "running", 30_000))


def _mark():
    (name,) = _names("t-mark")
    return [name], lambda: counters.mark(name, "done", ttl=30)


def _bump():
    (name,) = _names("t-flag")
    return [name], lambda: counters.bump(name)


def _put():
    (name,) = _names("t-put")
    return [name], lambda: counters.put(name, 1.5, ttl=30)


PATHS = [_hit, _hit_window, _recent_add, _take_slots, _release_slots, _renew_slots, _epoch_and_count, _mark, _bump,
         _put]


@pytest.fixture
def proxied_cache():
    """The cache (and so every counter) through a SteppingRedisProxy; yields (proxy, a direct client)."""
    location = urlsplit(settings.CACHES["default"]["LOCATION"])
    direct = redis.Redis.from_url(urlunsplit(location))
    with SteppingRedisProxy((location.hostname, location.port)) as proxy:
        caches = {"default": {**settings.CACHES["default"],
                              "LOCATION": urlunsplit(location._replace(netloc=f"127.0.0.1:{proxy.port}"))}}
        with override_settings(CACHES=caches):
            counters.reset()
            yield proxy, direct
    counters.reset()
    direct.close()


@pytest.mark.parametrize("path", PATHS, ids=lambda path: path.__name__.strip("_"))
@pytest.mark.parametrize("between", [1, 2, 3])
def test_no_key_of_a_counter_path_is_left_without_an_expiry(db, proxied_cache, path, between):
    """`between`: the keys are deleted (expire) after the path's n-th command that names one of them."""
    proxy, direct = proxied_cache
    names, run = path()
    full = [counters._name(name) for name in names]
    run()  # the keys exist, with their expiry: the next run finds them there
    assert all(direct.pttl(key) > 0 for key in full if direct.exists(key)), "created without an expiry"
    seen = []

    def expire_between(command):
        named = [key for key in full if key.encode() in command[1:]]
        if named:
            seen.append(command)
            if len(seen) == between:
                direct.delete(*named)

    proxy.hook = expire_between
    try:
        run()
    finally:
        proxy.hook = None
    assert seen, f"the path sent nothing through the proxy: {proxy.commands}"
    left = {key: direct.pttl(key) for key in full if direct.exists(key)}
    assert all(ttl > 0 for ttl in left.values()), f"keys without an expiry: {left} after {seen}"


def test_a_counter_left_without_an_expiry_gets_one_at_its_next_hit(db):
    """A brake that older code left without an expiry lifts after all: the next hit gives it its window."""
    name = f"t-stuck:{uuid.uuid4().hex}"
    client = counters._client()
    client.set(counters._name(name), 7)  # no expiry, as a lost race left it
    assert counters.hit_window(name, seconds=60) == (8, 60)
    assert 0 < client.ttl(counters._name(name)) <= 60
