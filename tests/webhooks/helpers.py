"""Builders of webhook rows for tests, and one attempt of one delivery through the worker's path."""

from django.utils import timezone

from webhooks import crypto
from webhooks.models import Delivery, DeliveryAttempt, Event, Subscription
from webhooks.sender import send_batch


def make_subscription(org, *, url="https://hooks.example.com/in", events=("call.ended",), enabled=True, secret=None,
                      location_ids=None):
    """A subscription row written directly (no URL vetting); returns it with `.plain_secret` set."""
    secret = secret or crypto.generate_secret()
    sub = Subscription.objects.create(
        organization=org,
        url=url,
        events=list(events),
        enabled=enabled,
        secret_encrypted=crypto.encrypt(secret),
        secret_preview=secret[:8],
        location_ids=None if location_ids is None else list(location_ids),
    )
    sub.plain_secret = secret
    return sub


def attempt_delivery(delivery_id) -> str:
    """One attempt of a delivery if it is due and unclaimed, as a worker makes it (`send_batch`, a batch of one):
    what happened ("skipped", "succeeded", "retry", "failed", "disabled", "stale")."""
    return send_batch([delivery_id])[str(delivery_id)]


def make_event(org):
    """An event row written directly (`{}` for a payload), with no deliveries."""
    return Event.objects.create(
        id=Event.new_id(), organization=org, type="call.ended", created_at=timezone.now(), payload=b"{}"
    )


def make_delivery(org, sub, *, status=Delivery.Status.FAILED):
    """A delivery of a fresh event to `sub`, written directly (failed unless told)."""
    return Delivery.objects.create(organization=org, event=make_event(org), subscription=sub, status=status)


def make_attempt(org, delivery, number, status_code, *, at=None):
    """A logged attempt of `delivery`, dated `at` (default now)."""
    attempt = DeliveryAttempt.objects.create(
        organization=org, delivery=delivery, number=number, status_code=status_code, duration_ms=5
    )
    if at is not None:
        DeliveryAttempt.objects.filter(pk=attempt.pk).update(created_at=at)
    return attempt
