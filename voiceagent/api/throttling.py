"""Per-key rate limits in Redis (Django's cache), so every process shares one count.

A fixed one-minute window per key and kind (read or write). The counters are atomic `incr`s; the
headers follow the IETF RateLimit draft and go on every response through `RateLimitHeadersMixin`.
"""

import time

from django.conf import settings
from rest_framework.throttling import BaseThrottle

from voiceagent import counters
from voiceagent.counters import hit

from .permissions import READ_METHODS

WINDOW_SECONDS = 60


def _window(request) -> tuple[str, int, int]:
    """The counter of this request's key and kind in the current window, the kind's limit, and seconds left."""
    kind = "read" if request.method in READ_METHODS else "write"
    limit = settings.RATE_LIMIT_READS_PER_MINUTE if kind == "read" else settings.RATE_LIMIT_WRITES_PER_MINUTE
    now = time.time()
    window = int(now // WINDOW_SECONDS)
    reset = max(1, int((window + 1) * WINDOW_SECONDS - now + 0.999))
    return f"ratelimit:{request.auth.pk}:{kind}:{window}", limit, reset


class KeyRateThrottle(BaseThrottle):
    def allow_request(self, request, view):
        if request.auth is None:
            return True
        counter, limit, self.reset = _window(request)
        used = hit(counter, ttl=WINDOW_SECONDS * 2)
        request.rate_limit = {"limit": limit, "remaining": max(0, limit - used), "reset": self.reset}
        return used <= limit

    def wait(self):
        return self.reset


def rate_limit_headers(request) -> dict[str, str]:
    """RateLimit-* for every response to a known key, also those refused before the throttle ran (403 scope),
    which report the window without counting themselves."""
    info = getattr(request, "rate_limit", None)
    if info is None:
        if getattr(request, "auth", None) is None:
            return {}
        counter, limit, reset = _window(request)
        info = {"limit": limit, "remaining": max(0, limit - counters.peek(counter)), "reset": reset}
    return {
        "RateLimit-Limit": str(info["limit"]),
        "RateLimit-Remaining": str(info["remaining"]),
        "RateLimit-Reset": str(info["reset"]),
    }
