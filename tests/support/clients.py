"""The clients a test drives the product with: `/v1` clients holding a key (the real key authenticator, never
force_authenticate) and dashboard clients logged in through the real authentication backend (never force_login)."""

from django.test import Client
from rest_framework.test import APIClient

from tests.factories import make_key

PASSWORD = "correct-horse-battery"  # tests.factories.UserFactory's password


def key_client(plaintext: str | None = None, *, settle: bool = False) -> APIClient:
    """A `/v1` client sending `plaintext` as its Bearer key (None: no Authorization header). `settle` makes one
    request first, so the key's once-a-minute `last_used_at` write is behind a test that counts queries or rows."""
    client = APIClient()
    if plaintext:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    if settle:
        client.get("/v1/me")
    return client


def org_client(org, scope: str = "read_write", *, settle: bool = False, **key) -> APIClient:
    """A `/v1` client with a new key of `org` (`key`: make_key's admin, name, location_ids)."""
    return key_client(make_key(org, scope=scope, **key)[1], settle=settle)


def logged_in(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client
