"""The one authenticator of /v1: `Authorization: Bearer <key>`, parsed exactly, checked in one Redis round trip.

Each process keeps the keys it has read from PostgreSQL. A kept key is trusted only when its epoch, read in the
same Redis script that counts the request against its rate limit, is the one it was kept with: a revocation (or a
change to the organization it carries) gives it a new epoch before the revoking request answers
(orgs/key_epochs.py), so the next request in every process reads PostgreSQL again and gets 401. When the epoch
cannot be read (Redis away), nothing kept is trusted: PostgreSQL decides, and the count falls back to this process.

An epoch can miss a change: the revoking process could not reach Redis past its retries, or Redis came back from an
older snapshot or a lagging replica. Two bounds hold then: a kept key is read from PostgreSQL again once it is
API_KEY_CACHE_SECONDS old (60), and a process that sees Redis fail drops every key it keeps.
"""

import re
import threading
import time
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.db.models.base import ModelState
from django.utils import timezone
from rest_framework import authentication, exceptions

from api.throttling import rates, verdict
from core import counters
from orgs import key_epochs
from orgs.keys import digest_key
from orgs.models import ApiKey
from orgs.selectors import active_api_key_row, api_key_from_row

from . import idempotency
from .permissions import required_scope

# docs/api.md#authentication: the header must match this exactly; DRF's TokenAuthentication would accept `bearer`.
HEADER_PATTERN = re.compile(r"Bearer ([A-Za-z0-9_]{40})")  # fullmatch: `$` would allow a trailing newline
LAST_USED_RESOLUTION = timedelta(minutes=1)
CACHE_SIZE = 10_000


class KeyPrincipal:
    """`request.user` for a key: authenticated, and nothing else (no Django user, no staff rights)."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False

    def __init__(self, key: ApiKey):
        self.key = key
        self.pk = None

    def __str__(self):
        return f"api-key:{self.key.key_prefix}"


class _Kept:
    """A key (its organization attached) as PostgreSQL answered, and the epoch read before that answer. Requests
    get copies (`_fresh`): nothing a request does to its key reaches the next one."""

    __slots__ = ("key", "epoch", "read_at")

    def __init__(self, key: ApiKey, epoch: str):
        self.key, self.epoch, self.read_at = key, epoch, time.monotonic()


def _fresh(instance):
    """A copy of a model instance without __init__ and its signals (from_db costs about 20 microseconds)."""
    clone = object.__new__(type(instance))
    clone.__dict__.update(instance.__dict__)
    clone._state = ModelState()
    clone._state.db, clone._state.adding = instance._state.db, False
    return clone


def _fresh_key(key: ApiKey) -> ApiKey:
    clone = _fresh(key)
    clone._state.fields_cache["organization"] = _fresh(key.organization)
    return clone


_kept: dict[str, _Kept] = {}
_kept_lock = threading.Lock()


def _keep(digest: str, key: ApiKey, epoch: str) -> None:
    with _kept_lock:
        if len(_kept) >= CACHE_SIZE:
            _kept.pop(next(iter(_kept)))  # the oldest kept key: it reads PostgreSQL again when it comes back
        _kept[digest] = _Kept(key, epoch)


def forget_kept_keys() -> None:
    """Empties this process's key cache: when Redis fails (an epoch bump may be lost with it), and in tests."""
    with _kept_lock:
        _kept.clear()


counters.on_redis_failure(forget_kept_keys)


class ApiKeyAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION")
        if header is None:
            return None
        match = HEADER_PATTERN.fullmatch(header)
        if match is None:
            # Every malformed header still costs one digest lookup, so timing tells nothing about why it failed.
            active_api_key_row(digest_key(header))
            raise exceptions.AuthenticationFailed()
        digest = digest_key(match.group(1))
        kept = _kept.get(digest)
        if kept is not None:
            key = _fresh_key(kept.key)
            epoch = self._count(request, key, digest)
            stale = time.monotonic() - kept.read_at >= settings.API_KEY_CACHE_SECONDS
            if epoch is None or epoch != kept.epoch or stale:
                # Changed since it was kept, unverifiable, or kept too long to trust the epoch alone: PostgreSQL
                # decides (the request is counted already; its epoch was read before the row, as below).
                key = self._read(digest, epoch)
        else:
            # The epoch is read BEFORE the row: a change committed after this read moves the epoch past it, so
            # the row is never kept under an epoch newer than itself.
            epoch = counters.epoch_and_count(key_epochs.flag(digest))[0]
            key = self._read(digest, epoch)
            self._count(request, key, digest)
        self._touch(key, digest)
        request._request._audit_key = key  # the actor of the audit entries this request writes (core.actors)
        return KeyPrincipal(key), key

    def authenticate_header(self, request):
        return "Bearer"

    @staticmethod
    def _read(digest: str, epoch: str | None) -> ApiKey:
        row = active_api_key_row(digest)
        if row is None:
            with _kept_lock:
                _kept.pop(digest, None)
            raise exceptions.AuthenticationFailed()
        key = api_key_from_row(row)
        if epoch is not None:
            _keep(digest, key, epoch)
            return _fresh_key(key)
        return key

    @staticmethod
    def _count(request, key: ApiKey, digest: str) -> str | None:
        """Counts the request against its key's and its organization's limits (a request its scope refuses is
        only shown them: it answers 403 before the rate limit applies) and returns the key's epoch, in one round
        trip."""
        kind = required_scope(request.method)
        counted = kind in key.scopes
        claim = idempotency.claim(request, key.pk) if counted else None
        epoch, states, claimed = counters.epoch_and_count(
            key_epochs.flag(digest), rates(key, kind), mode="hit" if counted else "peek", claim=claim
        )
        if claim is not None:
            request.idempotency_claimed = claimed
        request.rate_limit = verdict(states)
        return epoch

    @staticmethod
    def _touch(key: ApiKey, digest: str) -> None:
        # At most one write a minute per key, and the filter makes concurrent processes write once between them.
        now = timezone.now()
        if key.last_used_at is None or now - key.last_used_at >= LAST_USED_RESOLUTION:
            cutoff = now - LAST_USED_RESOLUTION
            ApiKey.objects.filter(Q(last_used_at__isnull=True) | Q(last_used_at__lt=cutoff), pk=key.pk).update(
                last_used_at=now
            )
            kept = _kept.get(digest)
            if kept is not None:  # so this process does not try again within the minute
                kept.key.last_used_at = now
