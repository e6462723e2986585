"""Encryption at rest with the project's one field key (settings.FIELD_ENCRYPTION_KEY, Fernet): webhook signing
secrets (webhooks.crypto) and the answers stored under an `Idempotency-Key` (api/idempotency.py), which
may carry a secret shown once."""

import base64
import hashlib
from functools import cache

from cryptography.fernet import Fernet
from django.conf import settings
from django.utils.encoding import force_bytes


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
