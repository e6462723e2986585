"""Org-scoped reads of the webhooks app, for the API and the dashboard."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Prefetch

from .models import Delivery, DeliveryAttempt, Subscription


def subscription_list(*, org):
    """The org's subscriptions (a queryset; the API pages it newest first)."""
    return Subscription.objects.for_org(org)


def subscription_get(*, org, subscription_id) -> Subscription | None:
    """One subscription of the org by id, or None (another org's id gives None too)."""
    return Subscription.objects.for_org(org).filter(pk=subscription_id).first()


@dataclass
class SubscriptionHealth:
    """A subscription with what an admin needs to judge it."""

    subscription: Subscription
    last_success_at: datetime | None
    failure_streak: int  # consecutive failed attempts since the last success (0 when healthy)
    failing_since: datetime | None  # start of the current run of failures
    disabled_reason: str  # "" when enabled
    pending_count: int  # deliveries still waiting for an attempt


def subscription_list_with_health(org) -> list[SubscriptionHealth]:
    """The org's subscriptions, newest first, each with last success, failure streak and disabled reason.

    A few queries in all (not one per subscription): the streak counts attempts without a 2xx after the last
    success of that subscription.
    """
    subscriptions = list(Subscription.objects.for_org(org).order_by("-created_at", "-pk"))
    result = []
    for sub in subscriptions:
        attempts = DeliveryAttempt.objects.filter(delivery__subscription=sub)
        if sub.last_success_at:
            attempts = attempts.filter(created_at__gt=sub.last_success_at)
        streak = 0 if sub.failing_since is None else attempts.exclude(status_code__gte=200, status_code__lt=300).count()
        pending = Delivery.objects.filter(subscription=sub, status=Delivery.Status.PENDING).count()
        result.append(
            SubscriptionHealth(
                subscription=sub,
                last_success_at=sub.last_success_at,
                failure_streak=streak,
                failing_since=sub.failing_since,
                disabled_reason="" if sub.enabled else sub.disabled_reason,
                pending_count=pending,
            )
        )
    return result


def delivery_log(subscription: Subscription):
    """The subscription's deliveries (a queryset, page it newest first), each with its event and its attempts
    prefetched in order (`delivery.attempts.all()`): time, trigger, status code, duration, 2 KB of reply, error."""
    return (
        Delivery.objects.filter(subscription=subscription)
        .select_related("event")
        .prefetch_related(Prefetch("attempts", queryset=DeliveryAttempt.objects.order_by("created_at", "number")))
    )


def delivery_get(*, subscription: Subscription, delivery_id) -> Delivery | None:
    """One delivery of this subscription, or None."""
    return Delivery.objects.filter(subscription=subscription, pk=delivery_id).first()
