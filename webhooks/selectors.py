"""Org-scoped reads of the webhooks app, for the API and the dashboard."""

from dataclasses import dataclass
from datetime import UTC, datetime

from django.db.models import Case, Count, IntegerField, OuterRef, Prefetch, Q, Subquery, Value, When
from django.db.models.functions import Coalesce

from orgs.tenancy import get_for_org

from .models import Delivery, DeliveryAttempt, Subscription


def subscription_list(*, org):
    """The org's subscriptions (a queryset; the API pages it newest first)."""
    return Subscription.objects.for_org(org)


def subscription_get(*, org, subscription_id) -> Subscription:
    """One subscription of the org by id, or NotFound (orgs.tenancy: a malformed, missing or other org's id alike)."""
    return get_for_org(Subscription, org, subscription_id)


@dataclass
class SubscriptionHealth:
    """A subscription with what an admin needs to judge it."""

    subscription: Subscription
    last_success_at: datetime | None
    failure_streak: int  # consecutive failed attempts since the last success (0 when healthy)
    failing_since: datetime | None  # start of the current run of failures
    disabled_reason: str  # "" when enabled
    pending_count: int  # deliveries still waiting for an attempt


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _with_health(queryset):
    """`queryset` annotated with `health_pending` and `health_streak`: correlated subqueries, so the whole page is
    one query, whatever the number of subscriptions (a join would multiply attempts by deliveries)."""
    pending = (
        Delivery.objects.filter(subscription=OuterRef("pk"), status=Delivery.Status.PENDING)
        .order_by()
        .values("subscription")
        .annotate(n=Count("pk"))
        .values("n")
    )
    # Attempts without a 2xx after the subscription's last success (all of them when it never succeeded).
    failures = (
        DeliveryAttempt.objects.filter(
            delivery__subscription=OuterRef("pk"),
            created_at__gt=Coalesce(OuterRef("last_success_at"), Value(_EPOCH)),
        )
        .filter(Q(status_code__isnull=True) | Q(status_code__lt=200) | Q(status_code__gte=300))
        .order_by()
        .values("delivery__subscription")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return queryset.annotate(
        health_pending=Coalesce(Subquery(pending, output_field=IntegerField()), 0),
        health_streak=Case(
            When(failing_since__isnull=True, then=Value(0)),
            default=Coalesce(Subquery(failures, output_field=IntegerField()), 0),
            output_field=IntegerField(),
        ),
    )


def _health(sub: Subscription) -> SubscriptionHealth:
    return SubscriptionHealth(
        subscription=sub,
        last_success_at=sub.last_success_at,
        failure_streak=sub.health_streak,
        failing_since=sub.failing_since,
        disabled_reason="" if sub.enabled else sub.disabled_reason,
        pending_count=sub.health_pending,
    )


def subscription_list_with_health(org) -> list[SubscriptionHealth]:
    """The org's subscriptions, newest first, each with last success, failure streak and disabled reason.

    One query in all (not one per subscription): the streak counts attempts without a 2xx after the last
    success of that subscription.
    """
    queryset = _with_health(Subscription.objects.for_org(org)).order_by("-created_at", "-pk")
    return [_health(sub) for sub in queryset]


def subscription_get_with_health(*, org, subscription_id) -> SubscriptionHealth:
    """One subscription of the org with its health (as in `subscription_list_with_health`), in one query; NotFound
    when the id is not the org's."""
    return _health(get_for_org(_with_health(Subscription.objects.all()), org, subscription_id))


def delivery_log(subscription: Subscription):
    """The subscription's deliveries (a queryset, page it newest first), each with its event and its attempts
    prefetched in order (`delivery.attempts.all()`): time, trigger, status code, duration, 2 KB of reply, error."""
    return (
        Delivery.objects.filter(subscription=subscription)
        .select_related("event")
        .prefetch_related(Prefetch("attempts", queryset=DeliveryAttempt.objects.order_by("created_at", "number")))
    )

