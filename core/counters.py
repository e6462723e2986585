"""Short-lived counters and flags in Redis, shared by every process (the API's rate limits, the dashboard's brakes,
the test-delivery and invitation limits), and what they fall back to when Redis cannot be reached.

A Redis outage must not be an API outage: when a call to Redis fails (refused, reset, or 0.5 s without an answer:
the cache's socket timeouts), this process counts on its own for the next second before trying Redis again, and
answers from that count. Each process then holds its own window, so with W processes a key may get up to W times a
limit while Redis is away (docs/api.md#limits). When Redis answers again the shared counts resume, fresh.
"""

import hashlib
import logging
import math
import secrets
import threading
import time
from dataclasses import dataclass

from django.core.cache import DEFAULT_CACHE_ALIAS, cache, caches
from redis.exceptions import NoScriptError, RedisError

logger = logging.getLogger("voiceagent.counters")

RETRY_AFTER_SECONDS = 1.0
_lock = threading.Lock()
_local: dict[str, tuple[object, float]] = {}  # key -> (value, expires at, time.monotonic())
_down_until = 0.0


def _client():
    """One redis-py client per cache backend, kept: Django's RedisCache builds a new client for every operation
    (about 0.1 ms of Python each, as much as the round trip on loopback)."""
    backend = cache._cache
    client = getattr(backend, "_va_client", None)
    if client is None:
        client = backend._client(connection_pool=backend._get_connection_pool(write=True))
        backend._va_client = client
    return client


def _name(key: str, store=cache) -> str:
    """The cache's full key (prefix and version). Not make_and_validate_key: its memcached checks walk every
    character, and these keys are ASCII built here. `store`: the cache itself when the caller holds it already
    (each use of `cache` is a lookup through Django's connection proxy)."""
    return store.make_key(key)


def _redis_ok() -> bool:
    return time.monotonic() >= _down_until


_failure_listeners: list = []


def on_redis_failure(listener) -> None:
    """Calls `listener()` whenever this process sees Redis fail: what it kept on Redis's word (the API key cache,
    trusted by epoch) may have missed a change Redis could not carry."""
    _failure_listeners.append(listener)


def _down(exc: Exception) -> None:
    global _down_until
    if _redis_ok():
        logger.warning("Redis unreachable (%s): counting in this process for %.0f s", type(exc).__name__,
                       RETRY_AFTER_SECONDS)
    _down_until = time.monotonic() + RETRY_AFTER_SECONDS
    for listener in _failure_listeners:
        listener()


def _local_get(key: str):
    value, expires = _local.get(key, (None, 0.0))
    if expires <= time.monotonic():
        _local.pop(key, None)
        return None
    return value


# A counter is created with its expiry in the same step that creates it: one script, which Redis runs at once (no
# command of another client between its two, and no expiry either: a script sees the clock stop while it runs).
# Two commands instead (SET NX EX, then INCR) leave a key that expires between them re-created by INCR without an
# expiry: a brake that never lifts. A key that somehow has no expiry (one left so by older code) gets one here.
_COUNT = """
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('TTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
"""


def _script(source: str):
    """`source` as a redis-py Script on the kept client (EVALSHA, loaded again when Redis forgot it)."""
    client = _client()
    scripts = getattr(client, "_va_scripts", None)
    if scripts is None:
        scripts = client._va_scripts = {}
    script = scripts.get(source)
    if script is None:
        script = scripts[source] = client.register_script(source)
    return script


def _count(counter: str, seconds: int) -> tuple[int, int]:
    count, ttl = _script(_COUNT)(keys=[_name(counter)], args=[int(seconds)])
    return int(count), int(ttl)


def hit(counter: str, *, ttl: int) -> int:
    """Adds one to `counter` and returns the new count, atomically across processes: one round trip (a script that
    creates the counter with its expiry, `_COUNT`)."""
    if _redis_ok():
        try:
            return _count(counter, ttl)[0]
        except (RedisError, OSError) as exc:
            _down(exc)
    with _lock:
        count = (_local_get(counter) or 0) + 1
        expires = _local.get(counter, (None, time.monotonic() + ttl))[1]
        _local[counter] = (count, expires)
        return count


def hit_window(counter: str, *, seconds: int) -> tuple[int, int]:
    """Adds one to `counter` in a window that opens at its first hit and lasts `seconds`; returns the new count and
    the whole seconds until the window closes (>= 1). Unlike a clock-aligned window, a burst cannot straddle a
    boundary and get twice the limit. One round trip."""
    if _redis_ok():
        try:
            count, ttl = _count(counter, seconds)
            return count, max(1, ttl)
        except (RedisError, OSError) as exc:
            _down(exc)
    with _lock:
        count = (_local_get(counter) or 0) + 1
        expires = _local.get(counter, (None, time.monotonic() + seconds))[1]
        _local[counter] = (count, expires)
        return count, max(1, int(expires - time.monotonic() + 0.999))


# An epoch is a random token under a flag key: read (and created when missing) in the same script that counts, and
# replaced with a fresh one by `bump`. Random, never a counter: after a Redis restart, which forgets every flag, a
# re-created flag cannot come back with a token a process saw before.
EPOCH_TTL_SECONDS = 86400
# Rates are GCRA (the generic cell rate algorithm: a token bucket kept as one number per limiter, the "theoretical
# arrival time" TAT, in Redis's clock): `limit` requests per `period` ms, each request moving TAT on by
# period/limit, refused while TAT would end more than a period ahead of now. A burst gets `limit` at once and then
# one more each period/limit, wherever the clock's minutes fall: no boundary at which the allowance starts over,
# so over any span of d ms at most limit + limit * d / period pass (docs/api.md#limits). One script checks every
# limiter of a request, and moves them all or none: a request one limiter refuses uses nothing of the others.
# Each limiter answers: allowed (1/0), remaining after this request, ms until it is full again, ms until it
# admits one more (0 when it admits now).
_EPOCH_AND_COUNT = """
local token = redis.call('GET', KEYS[1])
if not token then
  token = ARGV[1]
  redis.call('SET', KEYS[1], token, 'EX', ARGV[2])
end
local mode = ARGV[3]
local reply = {token}
if mode == 'none' then
  return reply
end
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + tonumber(now[2]) / 1000
local period = tonumber(ARGV[4])
local rates = tonumber(ARGV[5])
local all = true
local tats, steps, limits, oks = {}, {}, {}, {}
for i = 1, rates do
  limits[i] = tonumber(ARGV[5 + i])
  steps[i] = period / limits[i]
  local tat = tonumber(redis.call('GET', KEYS[1 + i]) or '0')
  if tat < now then tat = now end
  tats[i] = tat
  oks[i] = mode ~= 'hit' or tat + steps[i] - now <= period + 0.001
  if not oks[i] then all = false end
end
for i = 1, rates do
  if mode == 'hit' and all then tats[i] = tats[i] + steps[i] end
  local remaining = math.floor((period - (tats[i] - now)) / steps[i] + 0.001)
  if remaining < 0 then remaining = 0 end
  if remaining > limits[i] then remaining = limits[i] end
  local admit = 0
  if not oks[i] then admit = math.ceil(tats[i] + steps[i] - period - now) end
  reply[#reply + 1] = oks[i] and 1 or 0
  reply[#reply + 1] = remaining
  reply[#reply + 1] = math.ceil(tats[i] - now)
  reply[#reply + 1] = admit
end
if mode == 'hit' and all then
  for i = 1, rates do
    redis.call('SET', KEYS[1 + i], string.format('%.3f', tats[i]), 'PX', math.ceil(tats[i] - now) + 1)
  end
  local claim_key = KEYS[2 + rates]
  if claim_key then
    local claim = redis.call('GET', claim_key)
    if not claim then
      redis.call('SET', claim_key, ARGV[6 + rates], 'PX', ARGV[7 + rates])
      claim = ''
    end
    reply[#reply + 1] = claim
  end
end
return reply
"""


_thread = threading.local()
_EPOCH_AND_COUNT_SHA = hashlib.sha1(_EPOCH_AND_COUNT.encode()).hexdigest()  # noqa: S324 - Redis names scripts so


def _run_epoch_script(backend, keys: list[str], args: list) -> list:
    """EVALSHA on this thread's own connection, sent and read through redis-py's Connection: every /v1 request
    makes this call, and the client's per-command layers (pool checkout, retries, response callbacks) cost about
    0.1 ms here, as much as the round trip itself. The connection is this thread's alone, so nothing else
    interleaves on it; any failure drops it, and the next call opens another. `backend` is the cache's client
    object (RedisCache._cache)."""
    connection = getattr(_thread, "connection", None)
    try:
        if connection is None or _thread.backend is not backend:
            connection = backend._get_connection_pool(write=True).make_connection()
            # Connected here, not by send_command: that connects to the pool's address as given, and behind
            # Sentinel there is none (it went to localhost:6379); connect() asks Sentinel for the primary.
            connection.connect()
            _thread.connection, _thread.backend = connection, backend
        try:
            connection.send_command("EVALSHA", _EPOCH_AND_COUNT_SHA, len(keys), *keys, *args)
            return connection.read_response()
        except NoScriptError:  # a Redis that has not seen the script yet (a restart): EVAL loads it
            connection.send_command("EVAL", _EPOCH_AND_COUNT, len(keys), *keys, *args)
            return connection.read_response()
    except BaseException:
        if connection is not None:
            connection.disconnect()
        _thread.connection = None
        raise


@dataclass(frozen=True)
class Claim:
    """A name to set to `value` for `ttl_ms` unless it holds something, in the script that counts, when every rate
    admits the request (a refused request claims nothing)."""

    name: str
    value: str
    ttl_ms: int


@dataclass(frozen=True)
class Rate:
    """A limiter: at most `limit` requests per `period_ms` under `name` (GCRA, see _EPOCH_AND_COUNT)."""

    name: str
    limit: int
    period_ms: int = 60_000


@dataclass(frozen=True)
class RateState:
    """What one limiter said of a request: `allowed` (always True for a peek), `remaining` after it, whole
    seconds until it is full again (`reset`, at least 1) and until it admits another (`retry_after`, at least 1
    when refused, else 0)."""

    rate: Rate
    allowed: bool
    remaining: int
    reset: int
    retry_after: int


def _state(rate: Rate, allowed, remaining, full_ms, admit_ms) -> RateState:
    return RateState(rate, bool(int(allowed)), int(remaining), max(1, math.ceil(int(full_ms) / 1000)),
                     max(1, math.ceil(int(admit_ms) / 1000)) if not int(allowed) else 0)


def epoch_and_count(flag: str, rates: tuple[Rate, ...] = (), *, mode: str = "none", claim: Claim | None = None):
    """The epoch token under `flag` and, in the same round trip (one EVALSHA), each of `rates` counted (`mode`
    "hit": admitted by all, or by none), read ("peek") or left alone ("none"), and `claim` tried (with "hit", when
    every rate admits the request).

    Returns (token, states, claimed): the token is None when Redis cannot be reached, and the states then come
    from this process's own limiters; `states` has one RateState per rate; `claimed` is "" when the claim was set
    now, what its name held when it was there already, None when it was not tried (no claim, refused, or Redis
    unreachable)."""
    if _redis_ok():
        try:
            store = caches[DEFAULT_CACHE_ALIAS]  # once per request, not once per name
            keys = [_name(flag, store)]
            args = [secrets.token_hex(8), EPOCH_TTL_SECONDS, mode]
            if mode != "none" and rates:
                keys += [_name(rate.name, store) for rate in rates]
                args += [rates[0].period_ms, len(rates), *(rate.limit for rate in rates)]
                if claim is not None and mode == "hit":
                    keys.append(_name(claim.name, store))
                    args += [claim.value, claim.ttl_ms]
            elif mode != "none":
                mode = args[2] = "none"
            reply = _run_epoch_script(store._cache, keys, args)
            states = tuple(_state(rate, *reply[1 + 4 * i:5 + 4 * i]) for i, rate in enumerate(rates)) \
                if mode != "none" else ()
            claimed = reply[1 + 4 * len(states)].decode() if len(reply) > 1 + 4 * len(states) else None
            return reply[0].decode(), states, claimed
        except (RedisError, OSError) as exc:
            _down(exc)
    return None, (_local_rates(rates, mode) if mode != "none" else ()), None


def _local_rates(rates: tuple[Rate, ...], mode: str) -> tuple[RateState, ...]:
    """The same GCRA, in this process alone (Redis unreachable), on time.monotonic()."""
    now = time.monotonic() * 1000
    replies = []
    with _lock:
        tats = [max(now, _local_get(f"gcra:{rate.name}") or 0.0) for rate in rates]
        steps = [rate.period_ms / rate.limit for rate in rates]
        oks = [mode != "hit" or tat + step - now <= rate.period_ms + 0.001
               for rate, tat, step in zip(rates, tats, steps, strict=True)]
        for rate, tat, step, ok in zip(rates, tats, steps, oks, strict=True):
            after = tat + step if mode == "hit" and all(oks) else tat
            remaining = min(rate.limit, max(0, math.floor((rate.period_ms - (after - now)) / step + 0.001)))
            admit = 0 if ok else math.ceil(tat + step - rate.period_ms - now)
            replies.append((rate, ok, remaining, math.ceil(after - now), admit))
            if mode == "hit" and all(oks):
                # The fallback store's expiry is monotonic seconds.
                _local[f"gcra:{rate.name}"] = (after, after / 1000 + 1)
    return tuple(_state(*reply) for reply in replies)


# Counting semaphores: a sorted set per semaphore, each holder a member scored with the time (Redis's clock, ms)
# its hold expires, so a process killed while holding frees its place by itself. All or nothing across the named
# semaphores, in one script: a holder never takes one place and is then refused the other. Each key's expiry is set
# in the step that creates it and only ever pushed later (a key never outlives, nor expires under, a live holder).
#
# With a fair share (`Share`), the last semaphore (the one every tenant shares) keeps a share for tenants that have
# not used it lately: once half its places (rounded up) are held, the rest go only to a member that holds no place
# in the first semaphore (its own) and took or gave back none in the last `seconds` (the recent set, member -> when,
# Redis's clock). A tenant that keeps taking places then gets at most the open half while others wait.
_SLOTS = """
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ttl, n = tonumber(ARGV[2]), tonumber(ARGV[3])
local function earliest(key)
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return tonumber(first[2]) - now
end
for i = 1, n do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[3 + i]) then
    return {i, earliest(KEYS[i])}
  end
end
local recent = KEYS[n + 1]
if recent then
  local member, window = ARGV[4 + n], tonumber(ARGV[5 + n])
  redis.call('ZREMRANGEBYSCORE', recent, '-inf', now - window)
  if redis.call('ZCARD', KEYS[n]) >= math.ceil(tonumber(ARGV[3 + n]) / 2) then
    local last = redis.call('ZSCORE', recent, member)
    local own = redis.call('ZCARD', KEYS[1])
    if last or own > 0 then
      local wait = earliest(KEYS[n])
      if last and own == 0 then wait = math.min(wait, tonumber(last) + window - now) end
      return {n + 1, wait}
    end
  end
  redis.call('ZADD', recent, now, member)
  if redis.call('PTTL', recent) < window then redis.call('PEXPIRE', recent, window) end
end
for i = 1, n do
  redis.call('ZADD', KEYS[i], now + ttl, ARGV[1])
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
end
return {0, 0}
"""

# Gives back a holder's places; with a fair share, its member counts as having used one now.
_RELEASE_SLOTS = """
local n = tonumber(ARGV[2])
for i = 1, n do
  redis.call('ZREM', KEYS[i], ARGV[1])
end
local recent = KEYS[n + 1]
if recent then
  local now = redis.call('TIME')
  now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  local window = tonumber(ARGV[4])
  redis.call('ZADD', recent, now, ARGV[3])
  if redis.call('PTTL', recent) < window then redis.call('PEXPIRE', recent, window) end
end
"""


@dataclass(frozen=True)
class Share:
    """A fair share of the last semaphore of `take_slots` (see _SLOTS): `member` (a tenant) is recorded in the
    recent set `recent` for `seconds` after it takes or gives back a place."""

    recent: str
    member: str
    seconds: float


class SlotsBusy(Exception):
    """No place: `name` (the first full semaphore) has its `limit` holders, the earliest of which expires in
    `expires_in` seconds; `name` is None when Redis could not be reached. `fair_share`: the semaphore `name` had
    places, but only in the share kept for tenants that have not used one lately (`expires_in` is then when one
    may be free for this tenant)."""

    def __init__(self, name: str | None, expires_in: float, *, fair_share: bool = False):
        super().__init__(name or "redis unreachable")
        self.name, self.expires_in, self.fair_share = name, expires_in, fair_share


def _share_args(share: Share | None) -> tuple[list[str], list]:
    return ([], []) if share is None else ([_name(share.recent)], [share.member, int(share.seconds * 1000)])


def take_slots(slots: list[tuple[str, int]], *, ttl: float, share: Share | None = None) -> str:
    """Takes one place in each (name, limit) semaphore, all or none, held for at most `ttl` seconds; returns the
    holder token to give to `release_slots`. With `share`, the last semaphore keeps a fair share (see _SLOTS).
    Raises SlotsBusy when one is full, and also when Redis cannot be reached: these semaphores protect what every
    process shares, and a process cannot count them alone."""
    if _redis_ok():
        try:
            holder = secrets.token_hex(8)
            share_keys, share_args = _share_args(share)
            full, expires_ms = _script(_SLOTS)(
                keys=[*(_name(name) for name, _ in slots), *share_keys],
                args=[holder, int(ttl * 1000), len(slots), *(limit for _, limit in slots), *share_args])
            if full:
                fair_share = int(full) > len(slots)
                raise SlotsBusy(slots[min(int(full), len(slots)) - 1][0], max(0.0, int(expires_ms) / 1000),
                                fair_share=fair_share)
            return holder
        except (RedisError, OSError) as exc:
            _down(exc)
    raise SlotsBusy(None, RETRY_AFTER_SECONDS)


def release_slots(names: list[str], holder: str, *, share: Share | None = None) -> None:
    """Gives back the places `holder` took (nothing when Redis cannot be reached: they expire); with `share`, as
    `take_slots` was given it."""
    if _redis_ok():
        try:
            share_keys, share_args = _share_args(share)
            _script(_RELEASE_SLOTS)(keys=[*(_name(name) for name in names), *share_keys],
                                    args=[holder, len(names), *share_args])
        except (RedisError, OSError) as exc:
            _down(exc)


# Pushes `holder`'s expiry in each semaphore to now + ttl, where it still holds a place (a place that already
# expired, and may be someone else's now, is not taken back); the key lives at least as long.
_RENEW_SLOTS = """
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local held = 0
for _, key in ipairs(KEYS) do
  local score = redis.call('ZSCORE', key, ARGV[1])
  if score and tonumber(score) > now then
    redis.call('ZADD', key, 'XX', now + tonumber(ARGV[2]), ARGV[1])
    if redis.call('PTTL', key) < tonumber(ARGV[2]) then
      redis.call('PEXPIRE', key, ARGV[2])
    end
    held = held + 1
  end
end
return held
"""


def renew_slots(names: list[str], holder: str, *, ttl: float) -> bool:
    """Holds `holder`'s places (from `take_slots`) for `ttl` more seconds from now, for a holder that runs longer
    than any fixed TTL while it makes progress. False when a place had already expired or Redis cannot be reached
    (the places then expire as they would)."""
    if _redis_ok():
        try:
            held = _script(_RENEW_SLOTS)(keys=[_name(name) for name in names], args=[holder, int(ttl * 1000)])
            return int(held) == len(names)
        except (RedisError, OSError) as exc:
            _down(exc)
    return False


def bump(*flags: str) -> bool:
    """Gives each flag a fresh epoch token (one round trip); False when Redis could not be reached."""
    if not _redis_ok():
        return False
    try:
        names = [_name(flag) for flag in flags]
        pipe = _client().pipeline(transaction=False)
        for name in names:
            pipe.set(name, secrets.token_hex(8), ex=EPOCH_TTL_SECONDS)
        pipe.execute()
        return True
    except (RedisError, OSError) as exc:
        _down(exc)
        return False


def mark(name: str, value: str, *, ttl: float) -> None:
    """Sets `name` to the plain string `value` (no cache pickling: the counting script reads it) for `ttl` seconds;
    nothing when Redis cannot be reached."""
    if _redis_ok():
        try:
            _client().set(_name(name), value, px=int(ttl * 1000))
        except (RedisError, OSError) as exc:
            _down(exc)


def mark_once(name: str, *, ttl: float) -> bool | None:
    """Sets `name` for `ttl` seconds unless it is set (SET NX PX, one round trip): True when this call set it, False
    when it was set already, None when Redis cannot be reached (the caller decides what an unknown means)."""
    if not _redis_ok():
        return None
    try:
        return claim(name, "1", ttl=ttl)
    except (RedisError, OSError) as exc:
        _down(exc)
        return None


def unmark(name: str) -> None:
    """Clears what `mark` or `mark_once` set; nothing when Redis cannot be reached (the TTL clears it)."""
    if _redis_ok():
        try:
            _client().delete(_name(name))
        except (RedisError, OSError) as exc:
            _down(exc)


def peek(counter: str) -> int:
    """The current count (0 when none)."""
    if _redis_ok():
        try:
            return int(_client().get(_name(counter)) or 0)
        except (RedisError, OSError) as exc:
            _down(exc)
    with _lock:
        return _local_get(counter) or 0


def get(key: str):
    if _redis_ok():
        try:
            return cache.get(key)
        except (RedisError, OSError) as exc:
            _down(exc)
    with _lock:
        return _local_get(key)


def put(key: str, value, *, ttl: float) -> None:
    if _redis_ok():
        try:
            cache.set(key, value, timeout=ttl)
            return
        except (RedisError, OSError) as exc:
            _down(exc)
    with _lock:
        _local[key] = (value, time.monotonic() + ttl)


def delete(*keys: str) -> None:
    with _lock:
        for key in keys:
            _local.pop(key, None)
    if _redis_ok():
        try:
            cache.delete_many(list(keys))
        except (RedisError, OSError) as exc:
            _down(exc)


def reset() -> None:
    """Forgets this process's fallback counts and trusts Redis again (tests)."""
    global _down_until
    with _lock:
        _local.clear()
    _down_until = 0.0


def redis_time() -> float:
    """Redis's clock, in seconds since the epoch: the one every process agrees on where Redis decides (beat's
    periods). Raises RedisError or OSError: the caller decides what not knowing means."""
    seconds, micros = _client().time()
    return seconds + micros / 1_000_000


def ping() -> bool:
    """Whether Redis answers PONG (raises RedisError or OSError when it cannot be reached)."""
    return bool(_client().ping())


def claim(name: str, holder: str, *, ttl: float) -> bool:
    """Creates `name` (SET NX PX) holding `holder` for `ttl` seconds: True for the one caller that created it, False
    while it exists. Raises RedisError or OSError (no fallback: a claim only Redis can arbitrate)."""
    return bool(_client().set(_name(name), holder, nx=True, px=max(1, int(ttl * 1000))))


# A set of recent members (a sorted set scored by when each was added): what is in it and younger than `max_age`
# seconds. Members older than that are dropped as presumed lost, so a member whose removal never came (a process
# killed in between) costs nothing after `max_age`. Scored on Redis's clock (TIME), as every process that adds or
# counts agrees on it whatever its own says; the key's TTL is set in the step that adds.
_RECENT_ADD_SCRIPT = """
local t = redis.call('TIME')
redis.call('ZADD', KEYS[1], tonumber(t[1]) + tonumber(t[2]) / 1000000, ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""
_RECENT_COUNT_SCRIPT = """
local t = redis.call('TIME')
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(t[1]) + tonumber(t[2]) / 1000000 - tonumber(ARGV[1]))
return redis.call('ZCARD', KEYS[1])
"""


def recent_add(key: str, member: str, *, max_age: float) -> None:
    """Adds `member` to the recent set `key` (nothing when Redis is unreachable)."""
    if not _redis_ok():
        return
    try:
        _client().eval(_RECENT_ADD_SCRIPT, 1, _name(key), member, math.ceil(max_age) + 1)
    except (RedisError, OSError) as exc:
        _down(exc)


def recent_remove(key: str, member: str) -> None:
    if not _redis_ok():
        return
    try:
        _client().zrem(_name(key), member)
    except (RedisError, OSError) as exc:
        _down(exc)


def recent_count(key: str, *, max_age: float) -> int | None:
    """How many members of the recent set `key` were added in the last `max_age` seconds; None when Redis is
    unreachable (the caller then knows nothing)."""
    if not _redis_ok():
        return None
    try:
        return int(_client().eval(_RECENT_COUNT_SCRIPT, 1, _name(key), max_age))
    except (RedisError, OSError) as exc:
        _down(exc)
        return None
