"""Brakes on the forms anyone can post without an account: log in, sign up, password reset, invitation links.

Two counters, both in the shared cache (Redis, the same atomic counter as the API's rate limits), so every
process sees them:
- per client address and minute, the minute opening at its first POST (`attempt_limit`): the address is
  `core.clientaddr.client_address`, which honours X-Forwarded-For only from the proxies TRUSTED_PROXY_COUNT /
  TRUSTED_PROXIES name, so behind a proxy two clients are counted apart and a client cannot pick its own address;
  an IPv6 client is counted per /64 (`address_bucket`): one subscriber usually holds a whole /64, and counting its
  addresses apart would give it 2^64 fresh buckets;
- per account (`AccountBrake`): failed log-ins of one account from any number of addresses. The account is what
  log-in would sign in as: the user's id when the address names one, else the address as log-in normalizes it (NFKC,
  case-folded), so no other spelling of the address gets a fresh bucket. After FREE_FAILURES the account waits 30 s,
  doubling with every further failure up to 15 minutes; a success, or a password reset, clears it. The owner sees
  the wait, not a hint of whether the password was right. When the brake first engages, the account's owner is
  mailed (through the notifications outbox, once per hour however long the guessing lasts), so a sustained guess
  rate, which the brake only slows, does not go unnoticed; the answer to the log-in is the same either way.
"""

import hashlib
import time
import unicodedata

from django.shortcuts import render

from core import counters
from core.clientaddr import address_bucket, client_address
from core.counters import hit, hit_window
from orgs.selectors import user_id_for_username

WINDOW_SECONDS = 60


def too_many(request, wait: int, *, account: bool = False):
    response = render(request, "dashboard/auth/too_many_attempts.html", {"wait": wait, "account": account},
                      status=429)
    response["Retry-After"] = str(wait)
    return response


def address_brake(request, scope: str, limit: int):
    """Counts this POST for the client's address; the 429 response once past `limit` in a minute, else None. The
    minute opens at the address's first POST (`counters.hit_window`, as for the other brakes), so a burst cannot
    straddle a clock minute and get twice the limit."""
    count, wait = hit_window(f"attempts:{scope}:{address_bucket(client_address(request))}", seconds=WINDOW_SECONDS)
    if count > limit:
        return too_many(request, wait)
    return None


class AttemptLimitMixin:
    """For views whose POST comes from a parent class (Django's auth views, FormView); a view that defines its own
    `post` calls `address_brake` itself."""

    attempt_scope = ""
    attempt_limit = 10  # POSTs per client address per minute

    def post(self, request, *args, **kwargs):
        return address_brake(request, self.attempt_scope, self.attempt_limit) or super().post(
            request, *args, **kwargs
        )


class AccountBrake:
    """Failed attempts against one account: the user the submitted address names, or the normalized address (kept
    only as a digest in the cache key) when it names none."""

    FREE_FAILURES = 5
    FIRST_WAIT = 30
    MAX_WAIT = 900
    MEMORY = 3600  # failures are forgotten an hour after the last one

    def __init__(self, scope: str, email: str):
        self._init(scope, _account(login_username(email)))

    @classmethod
    def for_user(cls, scope: str, user) -> "AccountBrake":
        brake = cls.__new__(cls)
        brake._init(scope, f"user:{user.pk}")
        return brake

    def _init(self, scope: str, account: str) -> None:
        self.failures_key = f"attempts:{scope}:account:{account}"
        self.until_key = f"{self.failures_key}:until"
        # The user braked, when the address names one (never said to the client: the answers are the same).
        self.user_id = int(account.removeprefix("user:")) if account.startswith("user:") else None

    def wait(self) -> int:
        """Seconds this account must still wait (0: go ahead)."""
        until = counters.get(self.until_key)
        return max(0, int(until - time.time() + 0.999)) if until else 0

    def failed(self) -> int:
        """Counts a failure; returns the account's failures in its memory."""
        failures = hit(self.failures_key, ttl=self.MEMORY)
        if failures >= self.FREE_FAILURES:
            wait = min(self.MAX_WAIT, self.FIRST_WAIT * 2 ** (failures - self.FREE_FAILURES))
            counters.put(self.until_key, time.time() + wait, ttl=wait)
        return failures

    def first_notice(self) -> bool:
        """True once per MEMORY window (the first caller only, in every process): whether to tell the owner now."""
        return hit(f"{self.failures_key}:noticed", ttl=self.MEMORY) == 1

    def allow(self, limit: int, per_seconds: int) -> bool:
        """Counts one request for this account; False once more than `limit` came within `per_seconds`."""
        return hit(f"{self.failures_key}:{per_seconds}", ttl=per_seconds) <= limit

    def succeeded(self) -> None:
        counters.delete(self.failures_key, self.until_key)


def login_username(submitted) -> str:
    """The username a log-in looks up for what was typed: Django's username normalization (NFKC, so `ａlice＠corp.com`
    is `alice@corp.com`), stripped, lower-case (addresses are stored so). LoginForm cleans with it too."""
    return unicodedata.normalize("NFKC", str(submitted or "")).strip().lower()


def _account(username: str) -> str:
    user_id = user_id_for_username(username) if username else None
    if user_id is not None:
        return f"user:{user_id}"
    # casefold() on top of log-in's lower(): spellings that no account answers to may share one bucket, never split.
    return hashlib.sha256(username.casefold().encode()).hexdigest()[:32]
