"""Per-key rate limits in Django's cache (Redis in production), so every process shares one count.

A fixed one-minute window per key and kind (read or write). The counters are atomic `incr`s; the
headers follow the IETF RateLimit draft and go on every response through `RateLimitHeadersMixin`.
"""

import time

from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from rest_framework.throttling import BaseThrottle

from .permissions import READ_METHODS

WINDOW_SECONDS = 60


def hit(counter: str, *, ttl: int) -> int:
    """Adds one to `counter` and returns the new count, atomically across processes.

    On Redis it is one round trip (INCR and EXPIRE NX pipelined); Django's add() + incr() costs three.
    Other caches (local memory on a bare `make run`) take the portable path.
    """
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        name = backend.make_and_validate_key(counter)
        pipe = backend._cache.get_client(name, write=True).pipeline(transaction=False)
        pipe.incr(name)
        pipe.expire(name, ttl, nx=True)
        return pipe.execute()[0]
    cache.add(counter, 0, timeout=ttl)
    try:
        return cache.incr(counter)
    except ValueError:  # evicted between add and incr
        cache.add(counter, 1, timeout=ttl)
        return 1


class KeyRateThrottle(BaseThrottle):
    def allow_request(self, request, view):
        key = request.auth
        if key is None:
            return True
        kind = "read" if request.method in READ_METHODS else "write"
        limit = settings.RATE_LIMIT_READS_PER_MINUTE if kind == "read" else settings.RATE_LIMIT_WRITES_PER_MINUTE
        now = time.time()
        window = int(now // WINDOW_SECONDS)
        used = hit(f"ratelimit:{key.pk}:{kind}:{window}", ttl=WINDOW_SECONDS * 2)
        self.reset = max(1, int((window + 1) * WINDOW_SECONDS - now + 0.999))
        request.rate_limit = {"limit": limit, "remaining": max(0, limit - used), "reset": self.reset}
        return used <= limit

    def wait(self):
        return self.reset


def rate_limit_headers(request) -> dict[str, str]:
    info = getattr(request, "rate_limit", None)
    if not info:
        return {}
    return {
        "RateLimit-Limit": str(info["limit"]),
        "RateLimit-Remaining": str(info["remaining"]),
        "RateLimit-Reset": str(info["reset"]),
    }
