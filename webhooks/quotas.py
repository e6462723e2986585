"""The webhooks app's per-organization quotas (docs/api.md#quotas): subscriptions per organization, and replays
and recovers: one in progress per subscription, and at most QUOTA_REPLAY_DELIVERIES_PER_HOUR deliveries queued
by them per organization in any hour (the ReplayRun ledger, written under the organization's row lock)."""

import math
from datetime import timedelta

from django.conf import settings
from django.db.models import Sum
from django.utils import timezone

from core.errors import Conflict, DomainError, ValidationFailed
from orgs import quotas

from .models import Delivery, ReplayRun, Subscription

HOUR = timedelta(hours=1)


class ReplayQuotaReached(DomainError):
    """The organization's replays and recovers have queued so many deliveries in the last hour that this one
    would pass QUOTA_REPLAY_DELIVERIES_PER_HOUR; `retry_after` seconds from now it fits."""

    status = 429
    code = "rate_limited"

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


def check_subscriptions(org) -> None:
    """Before a subscription is created: locks the organization's row (until the transaction, which must be
    open, ends) and counts its subscriptions."""
    quotas.lock_organization(org)
    quotas.check_count(
        field="subscriptions", used=Subscription.objects.filter(organization=org).count(),
        limit=settings.QUOTA_SUBSCRIPTIONS_PER_ORG, what="webhook subscriptions",
        setting="QUOTA_SUBSCRIPTIONS_PER_ORG", free="Delete a subscription to create another.",
    )


def check_none_in_progress(subscription: Subscription) -> None:
    """Conflict (`replay`) while deliveries an earlier replay or recover queued to it are still waiting.
    Assumes the subscription's row is locked. Asked only of a replay that would queue something: the same replay
    again queues 0, as before, and is no error."""
    if Delivery.objects.filter(subscription_id=subscription.pk, status=Delivery.Status.PENDING,
                               priority=1).exists():
        raise Conflict("replay", "A replay or recover of this subscription is still being delivered: start another "
                                 "when it is done.")


def take_replay_quota(*, subscription: Subscription, kind: str, count: int) -> None:
    """Records `count` deliveries about to be queued by a replay or recover of `subscription`, or refuses them:
    ValidationFailed (`since`) when they alone are more than an hour's quota, Conflict (`replay`) while an
    earlier one is in progress, ReplayQuotaReached when the last hour's leave no room. Locks the organization's
    row; assumes a transaction is open (the one that queues)."""
    limit = settings.QUOTA_REPLAY_DELIVERIES_PER_HOUR
    if count > limit:
        raise ValidationFailed(field_errors={"since": [
            f"This would queue {count} deliveries, more than the {limit} an organization may queue by replays and "
            "recovers in an hour: choose a shorter range."]})
    if not count:
        return
    check_none_in_progress(subscription)
    org_id = subscription.organization_id
    quotas.lock_organization(subscription.organization)
    now = timezone.now()
    runs = ReplayRun.objects.filter(organization_id=org_id, created_at__gt=now - HOUR)
    used = runs.aggregate(total=Sum("queued"))["total"] or 0
    if used + count > limit:
        # When enough of the last hour's runs have aged out for this one to fit.
        freed, wait = 0, HOUR
        for run in runs.order_by("created_at").only("created_at", "queued"):
            freed += run.queued
            if used - freed + count <= limit:
                wait = run.created_at + HOUR - now
                break
        raise ReplayQuotaReached(
            f"Replays and recovers queued {used} deliveries for this organization in the last hour; this one "
            f"({count}) would pass QUOTA_REPLAY_DELIVERIES_PER_HOUR = {limit}.",
            retry_after=max(1, math.ceil(wait.total_seconds())),
        )
    ReplayRun.objects.create(organization_id=org_id, subscription_id=subscription.pk, kind=kind, queued=count)
