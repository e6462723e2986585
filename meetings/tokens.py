"""Dispatch tokens: 256 random bits in the `status_url`, stored only as a SHA-256 hex digest.

A fast hash is right for a high-entropy random token (as for API keys): nobody can guess one, so there is nothing
for a slow KDF to protect, and every progress post would pay for it.
"""

import hashlib
import hmac
import secrets

# A digest no token has: compared against when the dispatch is unknown, so that path costs the same.
NO_DIGEST = "0" * 64


def generate_token() -> str:
    return secrets.token_urlsafe(32)


def digest_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token, digest: str | None) -> bool:
    """Whether `token` is the one behind `digest`, in constant time; False for a missing token or digest."""
    given = digest_token(token) if isinstance(token, str) and token else ""
    expected = digest or NO_DIGEST
    return hmac.compare_digest(given.encode(), expected.encode()) and digest is not None
