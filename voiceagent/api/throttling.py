"""Per-key rate limits in Redis, so every process shares one count.

A fixed one-minute window per key and kind (read or write). The authenticator counts the request in the same Redis
round trip that validates its cached key (voiceagent/api/authentication.py); the throttle only reads the verdict.
The headers follow the IETF RateLimit draft and go on every keyed response through `rate_limit_headers`.
"""

import time

from django.conf import settings
from rest_framework.throttling import BaseThrottle

WINDOW_SECONDS = 60


def window(key_pk, kind: str) -> tuple[str, int, int]:
    """The counter of this key and kind ("read" or "write") in the current window, the kind's limit, and the
    seconds left in the window."""
    limit = settings.RATE_LIMIT_READS_PER_MINUTE if kind == "read" else settings.RATE_LIMIT_WRITES_PER_MINUTE
    now = time.time()
    current = int(now // WINDOW_SECONDS)
    reset = max(1, int((current + 1) * WINDOW_SECONDS - now + 0.999))
    return f"ratelimit:{key_pk}:{kind}:{current}", limit, reset


class KeyRateThrottle(BaseThrottle):
    def allow_request(self, request, view):
        info = getattr(request, "rate_limit", None)
        if info is None:
            return True
        self.reset = info["reset"]
        return not info["over"]

    def wait(self):
        return self.reset


def rate_limit_headers(request) -> dict[str, str]:
    """RateLimit-* for every response to a known key, those refused by their scope included."""
    info = getattr(request, "rate_limit", None)
    if info is None:
        return {}
    return {
        "RateLimit-Limit": str(info["limit"]),
        "RateLimit-Remaining": str(info["remaining"]),
        "RateLimit-Reset": str(info["reset"]),
    }
