"""Builders of webhook rows for tests, one attempt of one delivery through the worker's path, and a fake DNS for
the one DNS edge (webhooks.ssrf.resolve_host)."""

import ipaddress
import socket

from django.utils import timezone

from webhooks import crypto
from webhooks.delivery import send_batch
from webhooks.models import Delivery, DeliveryAttempt, Event, Subscription


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


class FakeDNS:
    """Names -> addresses. Unknown names do not resolve. Literal IPs resolve to themselves, as getaddrinfo does."""

    def __init__(self):
        self.answers = {"hooks.example.com": ["93.184.216.34"], "api.partner.io": ["151.101.1.69", "2606:4700::1"],
                        "internal.example.com": ["10.0.0.5"]}

    def __call__(self, host, port):
        try:
            return [str(ipaddress.ip_address(host))]
        except ValueError:
            pass
        if host in self.answers:
            return list(self.answers[host])
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


# Worker settings (its environment) for the tests that run a real worker: retries, sweeps, leases in seconds.
FAST_WORKER = {
    "WEBHOOK_ALLOW_LOCAL_URLS": "1",
    "WEBHOOK_RETRY_SCHEDULE": ",".join(["0.5"] * 9),
    "WEBHOOK_SWEEP_INTERVAL_SECONDS": "0.3",
    "WEBHOOK_REENQUEUE_AFTER_SECONDS": "2",
    "WEBHOOK_LEASE_SECONDS": "5",
}
# The drills' (a killed worker, a broker outage): a retry schedule that grows, a shorter lease.
DRILL_WORKER = {
    "WEBHOOK_ALLOW_LOCAL_URLS": "1",
    "WEBHOOK_RETRY_SCHEDULE": "0.5,0.5,1,1,2,2,4,4,8",
    "WEBHOOK_SWEEP_INTERVAL_SECONDS": "0.3",
    "WEBHOOK_REENQUEUE_AFTER_SECONDS": "2",
    "WEBHOOK_LEASE_SECONDS": "4",
}
