"""Org-scoped reads of the webhooks app, for the API and the dashboard."""

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db import connection
from django.db.models import Case, Count, IntegerField, OuterRef, Prefetch, Q, Subquery, Value, When
from django.db.models.functions import Coalesce, Now
from django.utils.timezone import now as django_now

from orgs.tenancy import get_for_org

from . import conf
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



# --- endpoint statistics --------------------------------------------------------------------------------------

STATS_WINDOWS = (("24h", timedelta(hours=24)), ("7d", timedelta(days=7)))
TOP_ERRORS = 5

# One round trip. Each window is an index-only range scan of webhooks_attempt_sub_created (subscription_id,
# created_at, INCLUDE status_code, duration_ms); the errors are a range scan of the partial webhooks_attempt_sub_failed
# (failed attempts only); the waiting deliveries are the subscription's part of the pending-only
# webhooks_delivery_sub_due. So the cost is this endpoint's own attempts in the window and its own queue, never the
# rest of the log (other endpoints', or older than 7 days). tests/webhooks/test_stats.py holds the plan.
_STATS_SQL = """
    SELECT w.name, t.* FROM unnest(%(names)s::text[], %(starts)s::timestamptz[]) AS w(name, since)
     CROSS JOIN LATERAL (
           SELECT count(*), count(*) FILTER (WHERE a.status_code BETWEEN 200 AND 299),
                  percentile_disc(0.5) WITHIN GROUP (ORDER BY a.duration_ms),
                  percentile_disc(0.95) WITHIN GROUP (ORDER BY a.duration_ms)
             FROM webhooks_deliveryattempt AS a WHERE a.subscription_id = %(sub)s AND a.created_at >= w.since
     ) AS t;
    SELECT w.name, e.error, e.n FROM unnest(%(names)s::text[], %(starts)s::timestamptz[]) AS w(name, since)
     CROSS JOIN LATERAL (
           SELECT a.error, count(*) AS n FROM webhooks_deliveryattempt AS a
            WHERE a.subscription_id = %(sub)s AND a.created_at >= w.since AND a.error <> ''
            GROUP BY a.error ORDER BY n DESC, a.error LIMIT %(top)s
     ) AS e;
    SELECT count(*), min(d.created_at) FROM webhooks_delivery AS d
     WHERE d.subscription_id = %(sub)s AND d.status = 'pending'
"""


def subscription_stats(subscription: Subscription, *, now=None) -> dict:
    """The endpoint's health over the last 24 hours and 7 days (attempts, success rate, p50/p95 response time, most
    frequent errors), its deliveries waiting and the age of the oldest, and whether fair delivery has slowed it down
    and why (docs/webhooks.md#endpoint-statistics). The caller has scoped `subscription` to the org."""
    now = now or django_now()
    params = {
        "sub": subscription.pk, "names": [name for name, _ in STATS_WINDOWS],
        "starts": [now - span for _, span in STATS_WINDOWS], "top": TOP_ERRORS,
    }
    with connection.cursor() as cursor:
        cursor.execute(_STATS_SQL, params)
        totals = {row[0]: row[1:] for row in cursor.fetchall()}
        cursor.nextset()
        errors: dict = {}
        for name, error, count in cursor.fetchall():
            errors.setdefault(name, []).append({"error": error, "count": count})
        cursor.nextset()
        waiting, oldest = cursor.fetchone()
    windows = {}
    for name, _ in STATS_WINDOWS:
        attempts, succeeded, p50, p95 = totals[name]
        windows[name] = {
            "attempts": attempts,
            "succeeded": succeeded,
            "success_rate": round(succeeded / attempts, 4) if attempts else None,
            "p50_ms": p50,
            "p95_ms": p95,
            "top_errors": errors.get(name, []),
        }
    paused = subscription.paused_until is not None and subscription.paused_until > now
    slowed = subscription.in_flight_limit is not None or paused
    return {
        "windows": windows,
        "waiting": {
            "count": waiting,
            "oldest_created_at": oldest,
            "oldest_age_seconds": round((now - oldest).total_seconds(), 3) if oldest else None,
        },
        "slowed_down": {
            "active": slowed,
            "reason": subscription.slowed_reason if slowed else "",
            "since": subscription.slowed_at if slowed else None,
            "in_flight_limit": subscription.in_flight_limit or conf.max_in_flight(),
            "paused_until": subscription.paused_until if paused else None,
        },
    }


# --- reconciliation -----------------------------------------------------------------------------------------------

# The events due to one subscription whose `created_at` falls on one UTC day, with their delivery's status. The
# deliveries are read from the subscription's index from the day's start on (a replay writes a delivery later than
# its event, never earlier).
_RECONCILIATION_SQL = """
    SELECT e.id, d.status
      FROM webhooks_delivery d JOIN webhooks_event e ON e.id = d.event_id
     WHERE d.subscription_id = %s AND d.created_at >= %s AND e.created_at >= %s AND e.created_at < %s
"""


def reconciliation_digest(event_ids) -> str:
    """SHA-256 (hex) of the event ids sorted by their bytes and joined by one newline, no trailing newline (the
    empty day: the digest of no bytes). docs/webhooks.md#reconciliation shows a receiver computing the same."""
    return hashlib.sha256("\n".join(sorted(event_ids)).encode("ascii")).hexdigest()


def subscription_reconciliation(subscription: Subscription, day) -> dict:
    """`{date, event_count, event_ids_sha256, delivered, pending, failed}` over the events due to `subscription`
    that were created on UTC `day`: what a receiver recomputes from the `webhook-id`s it got to prove it missed
    nothing (or find that it did)."""
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    with connection.cursor() as cursor:
        cursor.execute(_RECONCILIATION_SQL, [subscription.pk, start, start, start + timedelta(days=1)])
        rows = cursor.fetchall()
    statuses = [status for _, status in rows]
    return {
        "date": day.isoformat(),
        "event_count": len(rows),
        "event_ids_sha256": reconciliation_digest(event_id for event_id, _ in rows),
        "delivered": statuses.count(Delivery.Status.SUCCEEDED),
        "pending": statuses.count(Delivery.Status.PENDING),
        "failed": statuses.count(Delivery.Status.FAILED),
    }


def due_deliveries():
    """Deliveries that are due and that nobody holds: new ones, retries whose time came, expired leases (the
    sweep's candidates; the claim's condition, as a queryset), on PostgreSQL's clock."""
    return Delivery.objects.filter(status=Delivery.Status.PENDING, next_attempt_at__lte=Now()).filter(
        Q(claimed_until__isnull=True) | Q(claimed_until__lt=Now())
    )
