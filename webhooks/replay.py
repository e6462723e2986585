"""Replay: send a subscription every event of a time range that it has not received and is not waiting for.

What `recover` cannot do: an event emitted while the subscription was disabled, or before it existed, has no
delivery to it at all. Replay creates one (or re-arms a failed one) for each such event whose type the
subscription receives, with the event's own id and stored bytes, so a receiver that dedupes on `webhook-id`
sees each event once however often it catches up.
"""

from datetime import timedelta

from django.db import connection, transaction

from audit import services as audit
from core import dbclock
from core.errors import Conflict, ValidationFailed

from . import quotas
from .models import EVENT_TYPES, Delivery, DeliveryAttempt, ReplayRun, Subscription
from .ssrf import masked_url
from .tasks import publisher

MAX_REPLAY_DAYS = 30

# One statement: a new pending delivery for each event in range with no delivery to this subscription, and a
# failed one re-armed (fresh attempts) where one exists. Only events the subscription covers now (emit's rule,
# Subscription.covering): at one of its locations when it has any, every event of the organization when not. A
# succeeded or pending delivery is left alone, which makes the same replay queue nothing the second time. Priority 1:
# behind the subscription's live deliveries (and, by the claim's round robin, never ahead of another subscription's).
# The returned ids are exactly the rows inserted or re-armed.
_REPLAY_SQL = """
    INSERT INTO webhooks_delivery (
        id, organization_id, created_at, updated_at, event_id, subscription_id, status, attempt_count,
        next_attempt_at, next_trigger, enqueued_at, claimed_until, claim_token, last_status_code, last_error,
        last_attempt_at, succeeded_at, priority
    )
    SELECT gen_random_uuid(), e.organization_id, %(now)s, %(now)s, e.id, %(subscription)s, %(pending)s, 0,
           %(now)s, %(manual)s, %(now)s, NULL, NULL, NULL, '', NULL, NULL, 1
      FROM webhooks_event e
     WHERE e.organization_id = %(org)s AND e.created_at >= %(since)s AND e.created_at <= %(until)s
       AND e.type = ANY(%(types)s) AND (%(locations)s::uuid[] IS NULL OR e.location_id = ANY(%(locations)s::uuid[]))
    ON CONFLICT (event_id, subscription_id) DO UPDATE
       SET status = EXCLUDED.status, attempt_count = 0, next_attempt_at = EXCLUDED.next_attempt_at,
           next_trigger = EXCLUDED.next_trigger, enqueued_at = EXCLUDED.enqueued_at, claimed_until = NULL,
           claim_token = NULL, updated_at = EXCLUDED.updated_at, priority = 1
     WHERE webhooks_delivery.status = %(failed)s
    RETURNING id
"""


# What _REPLAY_SQL would queue, counted first: the hourly quota refuses a replay before it writes anything.
_REPLAY_COUNT_SQL = """
    SELECT count(*)
      FROM webhooks_event e
      LEFT JOIN webhooks_delivery d ON d.event_id = e.id AND d.subscription_id = %(subscription)s
     WHERE e.organization_id = %(org)s AND e.created_at >= %(since)s AND e.created_at <= %(until)s
       AND e.type = ANY(%(types)s) AND (%(locations)s::uuid[] IS NULL OR e.location_id = ANY(%(locations)s::uuid[]))
       AND (d.id IS NULL OR d.status = %(failed)s)
"""


def _check_range(since, until, now) -> None:
    errors = {}
    if since < now - timedelta(days=MAX_REPLAY_DAYS):
        errors["since"] = [f"Must be within the last {MAX_REPLAY_DAYS} days."]
    elif since > now:
        errors["since"] = ["Must not be in the future."]
    if until < since:
        errors["until"] = ["Must not be before since."]
    if errors:
        raise ValidationFailed(field_errors=errors)


def _check_types(types) -> list[str]:
    unknown = [t for t in types if t not in EVENT_TYPES]
    errors = []
    if unknown:
        errors.append(f"Unknown event type(s): {', '.join(map(str, unknown))}. Allowed: {', '.join(EVENT_TYPES)}.")
    if len(set(types)) != len(types):
        errors.append("Event types must not repeat.")
    if errors:
        raise ValidationFailed(field_errors={"types": errors})
    return list(types)


def subscription_replay(*, subscription: Subscription, since, until=None, types=None) -> int:
    """Queues, to this enabled subscription, every event of its org created in [since, until] (until defaults to
    now; since at most 30 days ago) whose type it receives (and is in `types` when given), at one of its locations
    when it is limited to some (location-less events then never), that has no delivery to it
    that succeeded or is pending. Returns how many were queued. Conflict (`enabled`) when it is disabled: nothing
    would be sent; Conflict (`replay`) while an earlier replay or recover of it is still being delivered;
    ReplayQuotaReached past the organization's hourly quota (webhooks.quotas)."""
    now = dbclock.now()  # the queued deliveries are due now on the clock the claim reads
    until = now if until is None else until
    _check_range(since, until, now)
    wanted = set(subscription.events) if types is None else set(_check_types(types)) & set(subscription.events)
    with transaction.atomic():
        locked = Subscription.objects.select_for_update().get(pk=subscription.pk)
        if not locked.enabled:
            raise Conflict("enabled", "This subscription is disabled: enable it, then replay.")
        params = {
            "now": now, "subscription": locked.pk, "org": locked.organization_id, "since": since,
            "until": until, "types": sorted(wanted), "locations": locked.location_ids,
            "pending": Delivery.Status.PENDING,
            "failed": Delivery.Status.FAILED, "manual": DeliveryAttempt.Trigger.MANUAL,
        }
        with connection.cursor() as cursor:
            cursor.execute(_REPLAY_COUNT_SQL, params)
            quotas.take_replay_quota(subscription=locked, kind=ReplayRun.Kind.REPLAY, count=cursor.fetchone()[0])
            cursor.execute(_REPLAY_SQL, params)
            ids = [row[0] for row in cursor.fetchall()]
        publisher.publish_on_commit(ids)
        audit.record(org=locked.organization, action="webhook_subscription.replayed", target=locked,
                     target_label=masked_url(locked.url), changes={"since": [None, since], "until": [None, until],
                                                       "types": [None, sorted(wanted)], "queued": [None, len(ids)]})
    return len(ids)
