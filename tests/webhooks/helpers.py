"""Builders for webhook tests."""

from webhooks import crypto
from webhooks.models import Subscription


def make_subscription(org, *, url="https://hooks.example.com/in", events=("call.ended",), enabled=True, secret=None):
    """A subscription row written directly (no URL vetting); returns it with `.plain_secret` set."""
    secret = secret or crypto.generate_secret()
    sub = Subscription.objects.create(
        organization=org,
        url=url,
        events=list(events),
        enabled=enabled,
        secret_encrypted=crypto.encrypt(secret),
        secret_preview=secret[:8],
    )
    sub.plain_secret = secret
    return sub
