"""Rate limits in Redis, so every process shares one count: per key, and per organization beside it.

Each is a GCRA limiter (core/counters.py): `limit` requests a minute, a burst of `limit` at once, then one
more every 60/limit seconds. Unlike the clock-aligned windows before it, no minute boundary lets a burst through
twice: over any d seconds at most limit + limit * d / 60 pass (docs/api.md#limits). The authenticator counts the
request against both of its limiters in the same Redis round trip that validates its cached key
(api/authentication.py), all or none; the throttle only reads the verdict. The headers follow the IETF
RateLimit draft, for the tighter of the two, and go on every keyed response through `rate_limit_headers`.
"""

from django.conf import settings
from rest_framework.throttling import BaseThrottle

from core import counters


def rates(key, kind: str) -> tuple[counters.Rate, counters.Rate]:
    """The key's limiter and its organization's for this kind ("read" or "write")."""
    if kind == "read":
        per_key, per_org = settings.RATE_LIMIT_READS_PER_MINUTE, settings.RATE_LIMIT_ORG_READS_PER_MINUTE
    else:
        per_key, per_org = settings.RATE_LIMIT_WRITES_PER_MINUTE, settings.RATE_LIMIT_ORG_WRITES_PER_MINUTE
    return (counters.Rate(f"ratelimit:{key.pk}:{kind}", max(1, per_key)),
            counters.Rate(f"ratelimit:org:{key.organization_id}:{kind}", max(1, per_org)))


def verdict(states) -> dict:
    """`request.rate_limit` from the limiters' states: refused when any refused; the headers of the one that
    refused (the longest wait, when both did), else of the one with the fewest requests left."""
    refused = [state for state in states if not state.allowed]
    if refused:
        shown = max(refused, key=lambda state: state.retry_after)
    else:
        shown = min(states, key=lambda state: (state.remaining, -state.reset))
    return {"limit": shown.rate.limit, "remaining": shown.remaining, "reset": shown.reset, "over": bool(refused),
            "retry_after": shown.retry_after}


class KeyRateThrottle(BaseThrottle):
    def allow_request(self, request, view):
        info = getattr(request, "rate_limit", None)
        if info is None:
            return True
        self.retry_after = info["retry_after"]
        return not info["over"]

    def wait(self):
        return self.retry_after


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
