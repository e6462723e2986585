"""Webhook secrets: generation, encryption at rest (Fernet), and Standard Webhooks signatures."""

import base64
import hashlib
import hmac
import secrets
from functools import lru_cache

from orgs.crypto import fernet

SECRET_PREFIX = "whsec_"


def encrypt(plaintext: str) -> str:
    return fernet().encrypt(plaintext.encode()).decode()


def decrypt(token: str) -> str:
    return _decrypt(fernet(), token)


# A worker signs with the same few secrets over and over: decrypting one (Fernet's HMAC check and AES) on every claim of
# its subscription showed in a drain's profile (docs/benchmarks.md#figures-behind-the-code). Kept per process, by key
# and token, as long as the token is in use; the plaintext lives only in this process's memory, as it does while it
# signs.
@lru_cache(maxsize=4096)
def _decrypt(box, token: str) -> str:
    return box.decrypt(token.encode()).decode()


def generate_secret() -> str:
    """`whsec_` + base64 of 32 random bytes (docs/api.md#webhook-delivery); the HMAC key is the decoded bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """One Standard Webhooks signature, `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    digest = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signature_header(secrets_: list[str], msg_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` value: one signature per secret, space-separated (two during a rotation grace)."""
    return " ".join(sign(secret, msg_id, timestamp, body) for secret in secrets_)
