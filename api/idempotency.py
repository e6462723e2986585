"""`Idempotency-Key` on every POST and PATCH under /v1 (docs/api.md#idempotency): a retried request gets the first
one's answer instead of doing the work twice.

PostgreSQL decides, Redis predicts. The answer is stored in PostgreSQL in the same transaction as the change, under
a unique (API key, Idempotency-Key): a change can never commit without its record, nor twice. Redis saves the
common case its lookup: the script that authenticates and counts the request (core.counters) also claims the
key, so the first request learns in that same round trip that no other has it and goes straight to its handler:

1. claimed now: the handler runs in one transaction that its service joins (no savepoint pair,
   voiceagent/postgresql/base.py), and the answer is inserted unless a live one is there. It is there only when
   Redis forgot a claim (a restart): the transaction then rolls back, the change with it, and step 2 answers.
   Cost: one database round trip, the insert.
2. claimed before (or Redis unreachable): one statement tries a transaction-scoped advisory lock and looks the
   stored answer up. Same fingerprint (method, path, body; keyed, below): replayed with `Idempotent-Replayed: true`;
   another: 422 `idempotency_key_reused`. Nothing stored and the key claimed in Redis by a request still running,
   or the lock held: 409 `idempotency_key_in_use`. Nothing stored otherwise: the handler runs as in 1.

A handler that raises (validation, not found, conflict, a crash) or answers 5xx stores nothing, changes nothing
(the transaction rolls back) and lets go of the claim: a retry simply runs again. A request killed mid-way leaves
its claim for CLAIM_TTL_MS at most (the answer then is 409, as for a request still running).
Authentication, scope and rate-limit failures come first and never touch the key.

The stored answer is encrypted with the field key (FIELD_ENCRYPTION_KEY), as webhook secrets are: it may hold one
(a subscription's create or rotate-secret answer). Encryption costs CPU only, no round trip. The fingerprint is keyed
with the server's secret (orgs.crypto.keyed_fingerprint): a bare digest of the body would let whoever reads the table
confirm a guessed caller's number or card number by hashing it.
"""

import hashlib
import hmac
import json

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from rest_framework.response import Response

from core import counters
from core.errors import DomainError, ValidationFailed
from orgs.crypto import KEYED, decrypt_bytes, encrypt_bytes, keyed_fingerprint

from .models import IdempotencyKey
from .tasks import KEPT_FOR

HEADER = "Idempotency-Key"
METHODS = frozenset({"POST", "PATCH"})
CLAIM_TTL_MS = 60_000
RUNNING, DONE = "running", "done"


class KeyInUse(DomainError):
    status = 409
    code = "idempotency_key_in_use"


class KeyReused(DomainError):
    status = 422
    code = "idempotency_key_reused"


class _Stored(Exception):
    """Raised inside the request's transaction when a live answer is stored already: rolls the change back."""


def _clean(value: str) -> str:
    if not 1 <= len(value) <= 255 or not all(" " <= ch <= "~" for ch in value):
        raise ValidationFailed(field_errors={HEADER: ["Must be 1 to 255 printable ASCII characters."]})
    return value


def _digest(api_key_id, key: str) -> bytes:
    return hashlib.sha256(f"{api_key_id}:{key}".encode()).digest()


def _claim_name(api_key_id, key: str) -> str:
    return "idem:" + _digest(api_key_id, key).hex()


def _lock_id(api_key_id, key: str) -> int:
    return int.from_bytes(_digest(api_key_id, key)[:8], "big", signed=True)


def _request_digest(request) -> str:
    """The unkeyed SHA-256 of the method, path and body: never stored (keyed_fingerprint is)."""
    body = hashlib.sha256(request._request.body).hexdigest()
    return hashlib.sha256(f"{request.method}\n{request.get_full_path()}\n{body}".encode()).hexdigest()


def _same_request(stored: str, digest: str) -> bool:
    """Whether a stored fingerprint is this request's: keyed with SECRET_KEY or, a retry across a key rotation, with
    one of SECRET_KEY_FALLBACKS; or the bare digest an older process stored (a rolling deploy: it expires with its
    record)."""
    if not stored.startswith(KEYED):
        return hmac.compare_digest(stored, digest)
    return any(hmac.compare_digest(stored, keyed_fingerprint(digest, secret=secret))
               for secret in [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS])


def claim(request, api_key_id) -> counters.Claim | None:
    """What the authenticating script should claim for this request (see the module), or None."""
    value = request.META.get("HTTP_IDEMPOTENCY_KEY")
    if request.method not in METHODS or value is None:
        return None
    try:
        key = _clean(value)
    except ValidationFailed:
        return None  # answered 400 by `wrap`, after the scope and the rate limit
    return counters.Claim(_claim_name(api_key_id, key), RUNNING, CLAIM_TTL_MS)


# One statement: a new answer, or an expired one replaced; nothing when a live answer holds the key.
_STORE = """
    INSERT INTO orgs_idempotencykey (api_key_id, key, fingerprint, status_code, body, created_at)
    VALUES (%s, %s, %s, %s, %s, now())
    ON CONFLICT (api_key_id, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
        status_code = EXCLUDED.status_code, body = EXCLUDED.body, created_at = EXCLUDED.created_at
        WHERE orgs_idempotencykey.created_at <= %s
    RETURNING 1
"""


def _sealed(response) -> bytes:
    """The answer as stored: encrypted with the field key, as the secrets it may carry (a webhook subscription's
    `secret`, shown once) are everywhere else at rest. CPU only: no round trip is added."""
    return encrypt_bytes(json.dumps(response.data).encode()) if response.data is not None else b""


def _opened(body: bytes):
    if not body:
        return None
    if body[:1] in (b"{", b"["):  # written in clear by a process older than the encryption (a rolling deploy)
        return json.loads(body)
    return json.loads(decrypt_bytes(body))


def _store(api_key_id, key: str, fingerprint: str, response) -> None:
    body = _sealed(response)
    with connection.cursor() as cursor:
        cursor.execute(_STORE, [api_key_id, key, fingerprint, response.status_code, body, timezone.now() - KEPT_FOR])
        if cursor.fetchone() is None:
            raise _Stored()


def _replay(stored_id, digest: str) -> Response:
    stored = IdempotencyKey.objects.get(pk=stored_id)
    if not _same_request(stored.fingerprint, digest):
        raise KeyReused()
    return Response(_opened(bytes(stored.body)), status=stored.status_code,
                    headers={"Idempotent-Replayed": "true"})


def wrap(view, request, handler):
    """The handler to run for this request: `handler` itself, or `handler` under its Idempotency-Key."""
    value = request.headers.get(HEADER)
    if request.method not in METHODS or value is None:
        return handler
    key = _clean(value)
    digest = _request_digest(request)  # reads the body before DRF parses it (it then parses this copy)
    api_key = request.auth
    claimed = getattr(request, "idempotency_claimed", None)  # None: Redis was not asked or did not answer
    claim_name = _claim_name(api_key.pk, key)

    def run_and_store(request, *args, **kwargs):
        """The handler and its stored answer in one transaction that the handler's service joins."""
        with connection.joined():
            if claimed != "":
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT pg_try_advisory_xact_lock(%s), (SELECT id FROM orgs_idempotencykey"
                        " WHERE api_key_id = %s AND key = %s AND created_at > %s)",
                        [_lock_id(api_key.pk, key), api_key.pk, key, timezone.now() - KEPT_FOR],
                    )
                    locked, stored_id = cursor.fetchone()
                if stored_id is not None:
                    return _replay(stored_id, digest)
                if not locked or claimed == RUNNING:
                    raise KeyInUse()
            response = handler(request, *args, **kwargs)
            if response.status_code < 500:
                _store(api_key.pk, key, keyed_fingerprint(digest), response)
            else:
                transaction.set_rollback(True)
            return response

    def _stored_answer() -> Response | None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT id FROM orgs_idempotencykey WHERE api_key_id = %s AND key = %s AND created_at > %s",
                           [api_key.pk, key, timezone.now() - KEPT_FOR])
            row = cursor.fetchone()
        return None if row is None else _replay(row[0], digest)

    def run(request, *args, **kwargs):
        try:
            response = run_and_store(request, *args, **kwargs)
        except _Stored:
            # Redis had forgotten the claim and another request stored its answer: this one's change is undone.
            return _stored_answer()
        except KeyInUse:
            raise
        except BaseException:
            if claimed == "":
                counters.delete(claim_name)
                if (stored := _stored_answer()) is not None:  # Redis forgot a claim; the retry failed on its change
                    return stored
            raise
        if claimed == "":
            if response.status_code < 500:
                counters.mark(claim_name, DONE, ttl=KEPT_FOR.total_seconds())
            else:
                counters.delete(claim_name)
        return response

    return run
