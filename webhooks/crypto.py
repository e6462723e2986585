"""Webhook secrets: generation, encryption at rest (Fernet), and Standard Webhooks signatures."""

import base64
import hashlib
import hmac
import secrets

from orgs.crypto import fernet

SECRET_PREFIX = "whsec_"


def encrypt(plaintext: str) -> str:
    return fernet().encrypt(plaintext.encode()).decode()


def decrypt(token: str) -> str:
    return fernet().decrypt(token.encode()).decode()


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
