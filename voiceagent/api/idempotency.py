"""`Idempotency-Key` on every POST and PATCH under /v1 (docs/api.md#idempotency): a retried request gets the first
one's answer instead of doing the work twice.

Hooked in OrgAPIView.initial, after authentication, scope and the rate limit (their failures never touch a key):
the view's handler is wrapped so that, in ONE transaction,
1. a transaction-scoped advisory lock on (API key, Idempotency-Key) is tried: held by a request still running, the
   answer is 409 `idempotency_key_in_use`;
2. a stored answer younger than 24 hours is looked up: with the same fingerprint (method, path, body digest) it is
   replayed with `Idempotent-Replayed: true`, with another 422 `idempotency_key_reused`;
3. otherwise the handler runs and, when it returns a non-5xx response, that response is stored in the same
   transaction as the change it made. A handler that raises (validation, not found, conflict, a crash) stores
   nothing and, the transaction rolling back, changed nothing: a retry simply runs again.
"""

import hashlib
import json

from django.db import connection, transaction
from django.utils import timezone
from rest_framework.response import Response

from orgs.models import IdempotencyKey
from orgs.tasks import KEPT_FOR
from voiceagent.errors import DomainError, ValidationFailed

HEADER = "Idempotency-Key"
METHODS = frozenset({"POST", "PATCH"})


class KeyInUse(DomainError):
    status = 409
    code = "idempotency_key_in_use"


class KeyReused(DomainError):
    status = 422
    code = "idempotency_key_reused"


def _clean(value: str) -> str:
    if not 1 <= len(value) <= 255 or not all(" " <= ch <= "~" for ch in value):
        raise ValidationFailed(field_errors={HEADER: ["Must be 1 to 255 printable ASCII characters."]})
    return value


def _lock_id(api_key_id, key: str) -> int:
    digest = hashlib.sha256(f"{api_key_id}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _fingerprint(request) -> str:
    body = hashlib.sha256(request._request.body).hexdigest()
    return hashlib.sha256(f"{request.method}\n{request.get_full_path()}\n{body}".encode()).hexdigest()


# One statement, replacing an expired answer under the same key if there is one.
_STORE = """
    INSERT INTO orgs_idempotencykey (api_key_id, key, fingerprint, status_code, body, created_at)
    VALUES (%s, %s, %s, %s, %s, now())
    ON CONFLICT (api_key_id, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
        status_code = EXCLUDED.status_code, body = EXCLUDED.body, created_at = EXCLUDED.created_at
"""


def _store(api_key_id, key: str, fingerprint: str, response) -> None:
    body = json.dumps(response.data).encode() if response.data is not None else b""
    with connection.cursor() as cursor:
        cursor.execute(_STORE, [api_key_id, key, fingerprint, response.status_code, body])


def wrap(view, request, handler):
    """The handler to run for this request: `handler` itself, or `handler` under its Idempotency-Key."""
    value = request.headers.get(HEADER)
    if request.method not in METHODS or value is None:
        return handler
    key = _clean(value)
    fingerprint = _fingerprint(request)  # reads the body before DRF parses it (it then parses this copy)
    api_key = request.auth

    def run(request, *args, **kwargs):
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_try_advisory_xact_lock(%s), (SELECT id FROM orgs_idempotencykey"
                    " WHERE api_key_id = %s AND key = %s AND created_at > %s)",
                    [_lock_id(api_key.pk, key), api_key.pk, key, timezone.now() - KEPT_FOR],
                )
                locked, stored_id = cursor.fetchone()
            if not locked:
                raise KeyInUse()
            if stored_id is not None:
                stored = IdempotencyKey.objects.get(pk=stored_id)
                if stored.fingerprint != fingerprint:
                    raise KeyReused()
                return Response(json.loads(bytes(stored.body)) if stored.body else None, status=stored.status_code,
                                headers={"Idempotent-Replayed": "true"})
            response = handler(request, *args, **kwargs)
            if response.status_code < 500:
                _store(api_key.pk, key, fingerprint, response)
            return response

    return run
