"""Encryption at rest with the project's one field key (settings.FIELD_ENCRYPTION_KEY, Fernet): webhook signing
secrets (webhooks.crypto) and the answers stored under an `Idempotency-Key` (api/idempotency.py), which
may carry a secret shown once. And the keyed fingerprint those answers are stored under."""

import base64
import hashlib
from functools import cache

from cryptography.fernet import Fernet
from django.conf import settings
from django.utils.crypto import salted_hmac
from django.utils.encoding import force_bytes

FINGERPRINT_SALT = "orgs.idempotency.fingerprint"
# Marks a keyed fingerprint: one without it was stored, unkeyed, by a process older than the keying.
KEYED = "k1:"


@cache
def _fernet(key: str, secret_key: str) -> Fernet:
    if not key:
        # Only a bare dev checkout without `.env` gets here; derive a stable key rather than store secrets in clear.
        key = base64.urlsafe_b64encode(hashlib.sha256(force_bytes(secret_key)).digest())
    return Fernet(key)


def fernet() -> Fernet:
    """The field key's Fernet (built once per key: tests may change the settings)."""
    return _fernet(settings.FIELD_ENCRYPTION_KEY, settings.SECRET_KEY)


def encrypt_bytes(plaintext: bytes) -> bytes:
    return fernet().encrypt(plaintext)


def decrypt_bytes(token: bytes) -> bytes:
    return fernet().decrypt(token)


def keyed_fingerprint(digest: str, *, secret: str | None = None) -> str:
    """The fingerprint an `Idempotency-Key` record keeps of its request: an HMAC, under the server's secret
    (SECRET_KEY, never in the database; `secret` for one of SECRET_KEY_FALLBACKS), of the SHA-256 of its method, path
    and body. A bare digest could be matched by hashing guesses of the body (a caller's number, a card number the
    redaction took out of the call); this one cannot without the key. Keyed over the digest rather than the body
    itself, so records stored with the bare digest can be keyed in place (orgs 0015)."""
    return KEYED + salted_hmac(FINGERPRINT_SALT, digest, secret=secret, algorithm="sha256").hexdigest()
