"""The API key format (docs/api.md#authentication): `va_live_` + 32 alphanumerics, stored as a SHA-256 digest."""

import hashlib
import re
import secrets
import string

KEY_PREFIX = "va_live_"
KEY_LENGTH = 40
KEY_RANDOM_ALPHABET = string.ascii_letters + string.digits
VISIBLE_PREFIX_LENGTH = 12
KEY_PATTERN = re.compile(r"^va_live_[A-Za-z0-9]{32}$")


def generate_key() -> str:
    return KEY_PREFIX + "".join(secrets.choice(KEY_RANDOM_ALPHABET) for _ in range(KEY_LENGTH - len(KEY_PREFIX)))


def digest_key(plaintext: str) -> str:
    # A fast hash is right: ~190 bits of entropy make brute force moot, and a KDF would tax every request.
    return hashlib.sha256(plaintext.encode()).hexdigest()
