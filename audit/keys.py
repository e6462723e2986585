"""The keys of the audit chain, from a secret outside the database (docs/api.md#audit-trail, "What the chain proves").

Both derive from one secret, AUDIT_CHAIN_KEY (or, unset, SECRET_KEY), every node holds the same:
- the MAC key: HMAC-SHA256(secret, "voiceagent.audit.mac.v1"). Each entry gets `content_mac` when it is written and
  `chain_mac` when it is sealed; someone who can write the table but does not hold the secret cannot make either,
  so an entry inserted or re-linked by SQL fails `verify`;
- the head-signing key: the Ed25519 private key whose 32-byte seed is HMAC-SHA256(secret,
  "voiceagent.audit.head-signing.v1"). Organizations verify signed heads with its public key.
"""

import base64
import hashlib
import hmac
from functools import cache

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings

MAC_LABEL = b"voiceagent.audit.mac.v1"
SIGNING_LABEL = b"voiceagent.audit.head-signing.v1"


def _secret() -> bytes:
    return (settings.AUDIT_CHAIN_KEY or settings.SECRET_KEY).encode()


@cache
def _mac_key(secret: bytes) -> bytes:
    return hmac.new(secret, MAC_LABEL, hashlib.sha256).digest()


def mac(kind: bytes, data: bytes) -> str:
    """HMAC-SHA256 of `kind` + ":" + `data` under the chain's MAC key, lower-case hex. `kind` keeps a content MAC
    from ever standing for a chain MAC."""
    return hmac.new(_mac_key(_secret()), kind + b":" + data, hashlib.sha256).hexdigest()


@cache
def _signing_key(secret: bytes) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hmac.new(secret, SIGNING_LABEL, hashlib.sha256).digest())


def sign(payload: bytes) -> str:
    """The Ed25519 signature of `payload`, base64 (standard alphabet, padded)."""
    return base64.b64encode(_signing_key(_secret()).sign(payload)).decode()


def public_key() -> str:
    """The raw 32-byte Ed25519 public key, base64: what an organization keeps to check signed heads."""
    raw = _signing_key(_secret()).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return base64.b64encode(raw).decode()


def public_key_id() -> str:
    """A short name for the public key: the first 16 hex digits of its SHA-256 (changes with the secret)."""
    return hashlib.sha256(base64.b64decode(public_key())).hexdigest()[:16]
