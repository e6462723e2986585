"""Writes of the webhooks app, one transaction each: `emit`, and the subscription and delivery writes the API and
the dashboard call.

`emit` is THE one way any code emits a webhook event:

    from webhooks.services import emit

    with transaction.atomic():
        order.save(...)
        emit(org=order.organization, type="call_order.status_changed", data={...})

The event row, its envelope bytes and one delivery per matching subscription are written inside the
caller's transaction; the deliveries go to the broker only after that transaction commits. A rolled-back
change emits nothing; a committed one loses nothing (the sweep publishes what the broker missed).
"""

import datetime as dt
import json
import logging
import uuid
from datetime import timedelta
from decimal import Decimal

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from audit import services as audit
from core import dbclock
from core.errors import Conflict, ValidationFailed
from core.timefmt import iso_ms
from notifications.services import notify_webhook_disabled
from orgs.models import Organization
from orgs.scopes import clean_location_ids
from orgs.tenancy import ScopeForbidden, location_ids_of

from . import (
    crypto,
    quotas,
    tasks,  # the module: tasks imports delivery (its record), which imports this one
)
from .catalog import AUDIENCE, CALL_ID_FIELDS, EVERY_LOCATION, PRIVACY_EVENTS
from .errors import UnknownEventType
from .models import API_VERSION, EVENT_TYPES, Delivery, DeliveryAttempt, Event, Subscription
from .ssrf import masked_url, validate_url

logger = logging.getLogger("webhooks")

__all__ = [
    "emit",
    "events_tombstone",
    "subscription_create",
    "subscription_update",
    "subscription_delete",
    "subscription_rotate_secret",
    "delivery_retry",
    "deliveries_recover",
]

# --- emitting events ----------------------------------------------------------------------------------------


class _PayloadEncoder(json.JSONEncoder):
    """Timestamps as the API shows them (ms, Z); uuids and decimals as strings."""

    def default(self, o):
        if isinstance(o, dt.datetime):
            return iso_ms(o)
        if isinstance(o, dt.date):
            return o.isoformat()
        if isinstance(o, (uuid.UUID, Decimal)):
            return str(o)
        return super().default(o)


def envelope_bytes(*, event_id: str, type: str, created_at: dt.datetime, data) -> bytes:
    body = {"id": event_id, "type": type, "created_at": iso_ms(created_at), "api_version": API_VERSION, "data": data}
    return json.dumps(body, cls=_PayloadEncoder, separators=(",", ":"), ensure_ascii=False).encode()


def emit(*, org, type: str, data: dict, location_id=None, exclude_subscription_id=None) -> Event:  # noqa: A002
    """Writes the event and its deliveries in the current transaction; enqueues them after commit.

    `type` must be one of EVENT_TYPES (UnknownEventType otherwise: a bug in the caller). `data` is
    serialized once, here; datetimes become millisecond-Z strings, uuids strings. `location_id` is where it
    happened (the location of the call or booking that caused it; None when nothing located did). Subscriptions
    that are enabled, belong to `org`, list `type` and cover the location (`Subscription.covering`) each get one
    pending delivery, due now: all of the organization's, whatever scope the caller acts within (a location
    manager's change is still delivered to the organization-wide subscriptions). The privacy events also go to
    every subscription that received what they ask to delete (catalog.AUDIENCE). `exclude_subscription_id` gets
    none (an operational event about a failing endpoint never goes to that endpoint).

    An event about a call gets the call's next `sequence` in its data (CallEventSequence, under that row's lock
    until the caller's transaction ends, so the numbers follow the commit order of the call's events).
    """
    return emit_many(org=org, type=type, items=[(data, location_id)],
                     exclude_subscription_id=exclude_subscription_id)[0]


def emit_many(*, org, type: str, items: list[tuple[dict, object]],  # noqa: A002
              exclude_subscription_id=None) -> list[Event]:
    """`emit` for several events of one type at once, each `(data, location_id)`: one INSERT of the events, one
    read of the subscriptions per location among them, one INSERT of the deliveries (a purge emits one event per
    call it empties: a statement per event would make it crawl), and for events about calls one statement taking
    their `sequence` numbers. The events, in the order of `items`."""
    if type not in EVENT_TYPES:
        raise UnknownEventType(f"Unknown event type {type!r}")
    now = timezone.now()
    created_at = now.replace(microsecond=now.microsecond // 1000 * 1000)
    due = dbclock.now()
    call_ids = [_call_id(type, data) for data, _ in items]
    listing = Q(events__contains=[type])
    for implied in AUDIENCE.get(type, ()):
        listing |= Q(events__contains=[implied])
    subscribed = Subscription.objects.filter(listing, organization_id=org.pk, enabled=True)
    if exclude_subscription_id is not None:
        subscribed = subscribed.exclude(pk=exclude_subscription_id)
    with transaction.atomic():
        sequences = _next_sequences([call_id for call_id in call_ids if call_id is not None])
        events = []
        for (data, location_id), call_id in zip(items, call_ids, strict=True):
            if call_id is not None:
                data = {**data, "sequence": sequences[call_id].pop(0)}
            event_id = Event.new_id()
            events.append(Event(
                id=event_id, organization=org, type=type, api_version=API_VERSION, created_at=created_at,
                payload=envelope_bytes(event_id=event_id, type=type, created_at=created_at, data=data),
                call_id=call_id, location_id=location_id,
            ))
        _insert_events(org, type, created_at, events)
        audiences: dict = {}
        for event in events:
            if event.location_id not in audiences:
                covering = Q() if type in EVERY_LOCATION else Subscription.covering(event.location_id)
                audiences[event.location_id] = list(subscribed.filter(covering).values_list("pk", flat=True))
        deliveries = Delivery.objects.bulk_create(
            [
                # Due now on PostgreSQL's clock, which the claim reads, whatever this node's says.
                Delivery(organization=org, event=event, subscription_id=pk, next_attempt_at=due, enqueued_at=due)
                for event in events for pk in audiences[event.location_id]
            ]
        )
        tasks.publisher.publish_on_commit([delivery.pk for delivery in deliveries])
    return events


_NEXT_SEQUENCES_SQL = """
    INSERT INTO webhooks_calleventsequence AS s (call_id, last)
    SELECT * FROM unnest(%s::uuid[], %s::int[])
    ON CONFLICT (call_id) DO UPDATE SET last = s.last + EXCLUDED.last
    RETURNING s.call_id, s.last
"""


def _next_sequences(call_ids: list) -> dict:
    """Each call's next event numbers, as many as it appears in `call_ids`, in one statement: {call_id: [n, ...]}.
    The calls' rows stay locked until the caller's transaction ends; they are taken in id order, so two batches
    over the same calls wait for each other instead of deadlocking."""
    if not call_ids:
        return {}
    counts: dict = {}
    for call_id in call_ids:
        counts[call_id] = counts.get(call_id, 0) + 1
    ordered = sorted(counts, key=str)
    with connection.cursor() as cursor:
        cursor.execute(_NEXT_SEQUENCES_SQL, [ordered, [counts[call_id] for call_id in ordered]])
        rows = cursor.fetchall()
    by_id = {str(call_id): last for call_id, last in rows}
    return {call_id: list(range(by_id[str(call_id)] - counts[call_id] + 1, by_id[str(call_id)] + 1))
            for call_id in counts}


# The events of one emit_many as four arrays: Django's bulk_create cannot UNNEST a bytea column, and its VALUES list
# of eight parameters per event cost a purge more than the rest of its batch.
_INSERT_EVENTS = """
INSERT INTO webhooks_event (id, organization_id, type, api_version, created_at, payload, call_id, location_id)
SELECT t.id, %s, %s, %s, %s, t.payload, t.call_id, t.location_id
  FROM unnest(%s::varchar[], %s::bytea[], %s::uuid[], %s::uuid[]) AS t(id, payload, call_id, location_id)
"""


def _insert_events(org, type: str, created_at, events: list[Event]) -> None:  # noqa: A002
    with connection.cursor() as cursor:
        cursor.execute(_INSERT_EVENTS, [
            org.pk, type, API_VERSION, created_at,
            [event.id for event in events], [event.payload for event in events],
            [event.call_id for event in events], [event.location_id for event in events],
        ])
    for event in events:
        event._state.adding, event._state.db = False, connection.alias


def tombstone_data(data: dict, *, reason: str) -> dict:
    """What a stored event body keeps once the content it carried is deleted: its ids alone (docs/privacy.md)."""
    ids = {key: value for key, value in data.items() if key.endswith("_id") and not isinstance(value, (dict, list))}
    if "sequence" in data:  # the call's event number is no content: a receiver still orders by it
        ids["sequence"] = data["sequence"]
    return {**ids, "content_deleted": True, "content_deleted_reason": reason}


def events_tombstone(*, org, call_ids, reason: str, extra_event_ids=()) -> int:
    """Rewrites the stored bodies of the events about `call_ids` (and `extra_event_ids`) into tombstones: the event
    feed, the delivery log and every pending or retried delivery (which send `Event.payload` as stored) carry ids
    only from now on. An event already a tombstone, and the privacy events themselves, are left alone, so a second
    run writes nothing. Returns how many bodies were rewritten. Runs in the caller's transaction."""
    call_ids = list(call_ids)
    events = Event.objects.filter(organization_id=org.pk).exclude(type__in=PRIVACY_EVENTS)
    query = Q(call_id__in=call_ids) if call_ids else Q(pk__in=[])
    if extra_event_ids:
        query |= Q(pk__in=list(extra_event_ids))
    ids, payloads = [], []
    for event_id, event_type, created_at, payload in events.filter(query).values_list(
            "id", "type", "created_at", "payload"):
        body = json.loads(payload)
        if body.get("data", {}).get("content_deleted"):
            continue
        ids.append(event_id)
        payloads.append(envelope_bytes(event_id=event_id, type=event_type, created_at=created_at,
                                       data=tombstone_data(body.get("data", {}), reason=reason)))
    if ids:
        # One UPDATE from two arrays: bulk_update's CASE over every id was most of a purge's batch.
        with connection.cursor() as cursor:
            cursor.execute("UPDATE webhooks_event e SET payload = t.payload"
                           " FROM unnest(%s::varchar[], %s::bytea[]) AS t(id, payload) WHERE e.id = t.id",
                           [ids, payloads])
    return len(ids)


def _call_id(event_type: str, data: dict) -> uuid.UUID | None:
    """The call an event is about, for the trace. The engine stays payload-agnostic: a value that is not a call's
    uuid (only the engine's own tests send such payloads) leaves the event without a call."""
    value = data.get(CALL_ID_FIELDS.get(event_type, ""))
    try:
        return uuid.UUID(str(value)) if value is not None else None
    except ValueError:
        return None


# --- subscriptions and deliveries ---------------------------------------------------------------------------

MAX_DESCRIPTION = 5000
MAX_GRACE_SECONDS = 86400
MAX_RECOVER_DAYS = 30
SECRET_WARNING = "Store this secret now: it is not displayed again."


def _clean_url(url) -> str:
    if not isinstance(url, str) or not url.strip():
        raise ValidationFailed(field_errors={"url": ["This field is required."]})
    problems = validate_url(url.strip())
    if problems:
        raise ValidationFailed(field_errors={"url": problems})
    return url.strip()


def _clean_events(events) -> list[str]:
    if not isinstance(events, list) or not events:
        raise ValidationFailed(field_errors={"events": ["Choose at least one event type."]})
    errors = []
    if len(events) > len(EVENT_TYPES):
        errors.append(f"Ensure this field has no more than {len(EVENT_TYPES)} elements.")
    unknown = [e for e in events if e not in EVENT_TYPES]
    if unknown:
        errors.append(f"Unknown event type(s): {', '.join(map(str, unknown))}. Allowed: {', '.join(EVENT_TYPES)}.")
    if len(set(map(str, events))) != len(events):
        errors.append("Event types must not repeat.")
    if errors:
        raise ValidationFailed(field_errors={"events": errors})
    return list(events)


def _clean_description(description) -> str:
    description = description or ""
    if len(description) > MAX_DESCRIPTION:
        raise ValidationFailed(
            field_errors={"description": [f"Ensure this field has no more than {MAX_DESCRIPTION} characters."]}
        )
    return description


MAX_RATE_LIMIT = 1000


def _clean_rate_limit(value) -> int | None:
    """None (no cap) or a whole number of deliveries per second, 1..1000 (docs/webhooks.md#rate-limit)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RATE_LIMIT:
        raise ValidationFailed(
            field_errors={"rate_limit_per_second": [f"Ensure this value is a whole number from 1 to {MAX_RATE_LIMIT}."]}
        )
    return value


def _vet(changes: dict) -> tuple[dict, dict]:
    """(cleaned values, field errors) of each of url, events, description, rate_limit_per_second present in
    `changes`, every field checked. Resolves the URL's host (DNS): call it before opening a transaction, never while
    one holds locks."""
    cleaners = {
        "url": _clean_url, "events": _clean_events, "description": _clean_description,
        "rate_limit_per_second": _clean_rate_limit,
    }
    cleaned, field_errors = {}, {}
    for field, cleaner in cleaners.items():
        if field not in changes:
            continue
        try:
            cleaned[field] = cleaner(changes[field])
        except ValidationFailed as exc:
            field_errors.update(exc.details["fieldErrors"])
    return cleaned, field_errors


def _check_scope(org, changes: dict) -> None:
    """ScopeForbidden when a principal limited to locations asks for a subscription of the whole organization. An id
    of a location beyond its own is left to `clean_location_ids`, which reads through the scope: `400` under
    `location_ids` exactly as for an unknown id, so an answer never tells which ids are the organization's other
    locations."""
    scope = location_ids_of(org)
    if scope is None or "location_ids" not in changes:
        return
    if changes["location_ids"] is None:
        raise ScopeForbidden(Subscription.location_rule.what, scope)


def _finish_cleaning(org, changes: dict, cleaned: dict, field_errors: dict) -> dict:
    """Adds the cleaned `location_ids` (when given) to `cleaned`, then refuses every bad field at once (one
    ValidationFailed naming them all). Locks the locations named (orgs.scopes): call it inside the transaction."""
    if "location_ids" in changes:
        try:
            cleaned["location_ids"] = clean_location_ids(org=org, location_ids=changes["location_ids"])
        except ValidationFailed as exc:
            field_errors.update(exc.details["fieldErrors"])
    if field_errors:
        raise ValidationFailed(field_errors=field_errors)
    return cleaned


def subscription_create(
    *, org, url: str, events: list[str], description: str = "", enabled: bool = True,
    rate_limit_per_second: int | None = None, location_ids: list | None = None,
):
    """Creates a subscription with a fresh secret. Returns (subscription, plaintext secret): the only time the
    secret is available in clear. Raises ValidationFailed (fieldErrors url/events/description/location_ids) on bad
    input; the URL must be https:// and must not resolve to a non-public address (see webhooks.ssrf). Conflict
    (`subscriptions`) when the organization has QUOTA_SUBSCRIPTIONS_PER_ORG already. `location_ids` limits it to
    those locations' events (None: the whole organization's); ScopeForbidden when `org` is seen through a scope
    that does not hold them all (docs/api.md#locations-and-scope).

    The URL is vetted (DNS included) once, here, before the transaction opens: no network wait inside it."""
    changes = {"url": url, "events": events, "description": description,
               "rate_limit_per_second": rate_limit_per_second, "location_ids": location_ids}
    _check_scope(org, changes)
    cleaned, field_errors = _vet(changes)
    secret = crypto.generate_secret()
    with transaction.atomic():
        cleaned = _finish_cleaning(org, changes, cleaned, field_errors)
        quotas.check_subscriptions(org)
        subscription = Subscription.objects.create(
            organization=org,
            **cleaned,
            enabled=bool(enabled),
            secret_encrypted=crypto.encrypt(secret),
            secret_preview=secret[:8],
        )
        audit.record(org=org, action="webhook_subscription.created", target=subscription,
                     target_label=masked_url(subscription.url),
                     changes=audited(audit.created(audit.values_of(subscription, AUDITED))))
    return subscription, secret


# What a subscription's audit entries show of it; its secret never (rotation says only that it happened).
AUDITED = ("url", "events", "description", "enabled", "rate_limit_per_second", "location_ids")


def audited(changes: dict) -> dict:
    """`changes` as the audit trail keeps them: a URL masked to its scheme and host (ssrf.masked_url), as everywhere
    the trail names a subscription; the rest of a URL is for admins, who read it on the subscription itself."""
    if "url" in changes:
        changes = {**changes, "url": [None if url is None else masked_url(url) for url in changes["url"]]}
    return changes


def _record_update(locked: Subscription, before: dict) -> None:
    """One entry per change: enabling a disabled subscription is `reenabled`, anything else `updated`."""
    changes = audit.diff(before, audit.values_of(locked, AUDITED))
    if changes:
        action = "webhook_subscription.reenabled" if changes.get("enabled") == [False, True] else (
            "webhook_subscription.updated")
        audit.record(org=locked.organization, action=action, target=locked, target_label=masked_url(locked.url),
                     changes=audited(changes))


def subscription_update(*, subscription: Subscription, **changes) -> Subscription:
    """Changes any of url, events, description, rate_limit_per_second, location_ids, enabled (same rules as
    create). Turning delivery on or off follows `Subscription.set_enabled` (enabling clears the disabled reason);
    deliveries of a disabled subscription are not sent (recover them after re-enabling). Narrowing its locations
    drops what is queued for it from the others. The caller has already scoped `subscription` to the org (and to
    its own locations: `subscription.organization` is the org as it was read through). Input (DNS included) is
    vetted before the row is locked; the change itself is one transaction."""
    org = subscription.organization
    _check_scope(org, changes)
    cleaned, field_errors = _vet(changes)
    with transaction.atomic():
        cleaned = _finish_cleaning(org, changes, cleaned, field_errors)
        locked = Subscription.objects.select_for_update().get(pk=subscription.pk)
        before = audit.values_of(locked, AUDITED)
        fields = list(cleaned)
        for field, value in cleaned.items():
            setattr(locked, field, value)
        if "enabled" in changes:
            locked.set_enabled(bool(changes["enabled"]))
            fields += Subscription.ENABLED_FIELDS
        if fields:
            locked.save(update_fields=[*fields, "updated_at"])
            _record_update(locked, before)
        if locked.location_ids is not None and before["location_ids"] != locked.location_ids:
            _drop_uncovered(locked)
    return locked


# What a subscription narrowed to fewer locations (or from the whole organization) no longer covers, among its
# deliveries still waiting: gone, as if emitted after the change. One in flight (its lease unexpired) finishes.
_DROP_UNCOVERED_SQL = """
    DELETE FROM webhooks_delivery d
     USING webhooks_event e
     WHERE d.subscription_id = %(subscription)s AND d.status = 'pending' AND e.id = d.event_id
       AND (d.claimed_until IS NULL OR d.claimed_until < %(now)s)
       AND (e.location_id IS NULL OR NOT e.location_id = ANY(%(locations)s::uuid[]))
"""


def _drop_uncovered(locked: Subscription) -> None:
    """Deletes the waiting deliveries of events `locked` no longer covers. Assumes its row is locked."""
    with connection.cursor() as cursor:
        cursor.execute(_DROP_UNCOVERED_SQL, {"subscription": locked.pk, "now": timezone.now(),
                                             "locations": locked.location_ids})


def refuse_delete_of_location_in_use(location) -> None:
    """Conflict (`details.field` = `webhook_subscriptions`, naming them) while subscriptions are limited to the
    location: deleting it would silently widen or empty what they receive. Registered with
    knowledge.services.delete_guard; runs with the location locked, and `_finish_cleaning` locks the locations a
    subscription names, so none is limited to it meanwhile."""
    urls = sorted(Subscription.objects.filter(organization_id=location.organization_id,
                                              location_ids__contains=[location.pk]).values_list("url", flat=True))
    if urls:
        raise Conflict("webhook_subscriptions", f"Webhook subscriptions are limited to this location: "
                       f"{', '.join(urls)}. Delete them or change their locations first.")


@transaction.atomic
def subscription_delete(*, subscription: Subscription) -> None:
    """Deletes the subscription with its deliveries and attempt log. Events themselves stay."""
    if Subscription.objects.filter(pk=subscription.pk).delete()[0]:
        audit.record(org=subscription.organization, action="webhook_subscription.deleted", target=subscription,
                     target_label=masked_url(subscription.url),
                     changes=audited(audit.deleted(audit.values_of(subscription, AUDITED))))


@transaction.atomic
def subscription_rotate_secret(*, subscription: Subscription, grace_period_seconds: int = 0):
    """Replaces the secret atomically and returns (subscription, new plaintext secret).

    With grace_period_seconds = 0 the old secret stops signing at once. With N (1..86400) both secrets sign
    every delivery for N seconds (two signatures in `webhook-signature`), so receivers can switch without loss.
    """
    if not isinstance(grace_period_seconds, int) or not 0 <= grace_period_seconds <= MAX_GRACE_SECONDS:
        raise ValidationFailed(
            field_errors={"grace_period_seconds": [f"Ensure this value is between 0 and {MAX_GRACE_SECONDS}."]}
        )
    locked = Subscription.objects.select_for_update().get(pk=subscription.pk)
    secret = crypto.generate_secret()
    if grace_period_seconds:
        locked.previous_secret_encrypted = locked.secret_encrypted
        locked.previous_secret_expires_at = timezone.now() + timedelta(seconds=grace_period_seconds)
    else:
        locked.previous_secret_encrypted = ""
        locked.previous_secret_expires_at = None
    locked.secret_encrypted = crypto.encrypt(secret)
    locked.secret_preview = secret[:8]
    locked.save(
        update_fields=[
            "secret_encrypted", "secret_preview", "previous_secret_encrypted", "previous_secret_expires_at",
            "updated_at",
        ]
    )
    audit.record(org=locked.organization, action="webhook_subscription.secret_rotated", target=locked,
                 target_label=masked_url(locked.url), changes={"secret": ["[redacted]", "[redacted]"],
                                                   "grace_period_seconds": [None, grace_period_seconds]})
    return locked, secret


@transaction.atomic
def delivery_retry(*, delivery: Delivery) -> Delivery:
    """Queues one more attempt now (trigger "manual"), whatever the delivery's status. If it then fails and its
    attempts are not used up, the normal schedule continues. Conflict while an attempt is in flight (its lease
    judged on PostgreSQL's clock, as the claim judges it)."""
    now = dbclock.now()
    updated = Delivery.objects.filter(pk=delivery.pk).exclude(claimed_until__gt=now).update(
        status=Delivery.Status.PENDING,
        next_attempt_at=now,
        next_trigger=DeliveryAttempt.Trigger.MANUAL,
        enqueued_at=now,
        succeeded_at=None,
        priority=0,
    )
    if not updated:
        raise Conflict("delivery_id", "An attempt of this delivery is in progress; try again in a moment.")
    tasks.publisher.publish_on_commit([delivery.pk])
    delivery.refresh_from_db()
    return delivery


@transaction.atomic
def deliveries_recover(*, subscription: Subscription, since) -> int:
    """Re-queues every failed delivery of the subscription created at or after `since` (at most 30 days ago) of
    an event it covers now (at one of its locations, when limited), each with a fresh set of attempts. Returns how
    many were re-queued: exactly the rows it reset, which are the rows it enqueues (a delivery that stopped being
    failed meanwhile is neither counted nor enqueued). Conflict (`replay`) while an earlier replay or recover of it
    is still being delivered; ReplayQuotaReached past the organization's hourly quota (webhooks.quotas)."""
    now = dbclock.now()  # the re-queued deliveries are due now on the clock the claim reads
    if since < now - timedelta(days=MAX_RECOVER_DAYS):
        raise ValidationFailed(field_errors={"since": [f"Must be within the last {MAX_RECOVER_DAYS} days."]})
    if since > now:
        raise ValidationFailed(field_errors={"since": ["Must not be in the future."]})
    locked = Subscription.objects.select_for_update().get(pk=subscription.pk)
    failed = Delivery.objects.filter(subscription_id=locked.pk, status=Delivery.Status.FAILED, created_at__gte=since)
    if locked.location_ids is not None:
        failed = failed.filter(event__location_id__in=locked.location_ids)
    count = failed.count()
    quotas.take_replay_quota(subscription=locked, kind="recover", count=count)
    ids = _requeue_failed(subscription=locked, since=since, now=now)
    tasks.publisher.publish_on_commit(ids)
    audit.record(org=subscription.organization, action="webhook_subscription.recovered", target=subscription,
                 target_label=masked_url(subscription.url),
                 changes={"since": [None, since], "requeued": [None, len(ids)]})
    return len(ids)


# One statement: the rows it resets are exactly the rows it returns. A subscription limited to locations gets back
# only its locations' events, as it covers them now (its locations may have been narrowed since they failed).
# Priority 1: recovered deliveries queue behind the subscription's live ones (delivery/claim.py). Under READ
# COMMITTED a row another transaction changed meanwhile (a manual retry, a delete) is re-checked after its lock and
# left out.
_RECOVER_SQL = """
    UPDATE webhooks_delivery
       SET status = %(pending)s, attempt_count = 0, next_attempt_at = %(now)s, next_trigger = %(manual)s,
           enqueued_at = %(now)s, claimed_until = NULL, claim_token = NULL, updated_at = %(now)s, priority = 1
     WHERE subscription_id = %(subscription)s AND status = %(failed)s AND created_at >= %(since)s
       AND (%(locations)s::uuid[] IS NULL OR EXISTS (
            SELECT 1 FROM webhooks_event e
             WHERE e.id = webhooks_delivery.event_id AND e.location_id = ANY(%(locations)s::uuid[])))
    RETURNING id
"""


def _requeue_failed(*, subscription: Subscription, since, now) -> list:
    """Resets the subscription's failed deliveries created since `since` to pending; returns the ids it reset
    (and only those). Assumes a transaction is open."""
    with connection.cursor() as cursor:
        cursor.execute(
            _RECOVER_SQL,
            {
                "pending": Delivery.Status.PENDING, "failed": Delivery.Status.FAILED,
                "manual": DeliveryAttempt.Trigger.MANUAL, "now": now, "since": since,
                "subscription": subscription.pk, "locations": subscription.location_ids,
            },
        )
        return [row[0] for row in cursor.fetchall()]


def subscription_disable(*, subscription_id, reason: str, now, actor=audit.SYSTEM) -> bool:
    """Disables a subscription with a reason (the delivery worker's: a 410, or failing too long; the system is the
    actor), mails its organization's admins and "webhook problems" recipients, and tells its other subscriptions
    (`webhook_subscription.disabled`). False when it was already disabled."""
    subscription = Subscription.objects.select_for_update().get(pk=subscription_id)
    if not subscription.set_enabled(False, reason=reason, now=now):
        return False
    subscription.save(update_fields=[*Subscription.ENABLED_FIELDS, "updated_at"])
    audit.record(org=subscription.organization_id, action="webhook_subscription.auto_disabled", target=subscription,
                 target_label=masked_url(subscription.url), actor=actor,
                 changes={"enabled": [True, False], "disabled_reason": ["", reason]})
    notify_webhook_disabled(subscription=subscription, reason=reason)
    operational_event_emit(subscription=subscription, type="webhook_subscription.disabled", data={
        "subscription_id": str(subscription.pk), "url": masked_url(subscription.url), "reason": reason,
        "disabled_at": subscription.disabled_at})
    logger.warning("webhooks: disabled subscription %s: %s", subscription.pk, reason)
    return True


def operational_event_emit(*, subscription: Subscription, type: str, data: dict) -> Event:  # noqa: A002
    """An operational event about `subscription` (failing, disabled, recovered: docs/webhooks.md#operational-events)
    to its organization's other subscriptions that choose it; never to the endpoint itself."""
    org = Organization.objects.get(pk=subscription.organization_id)
    return emit(org=org, type=type, data=data, exclude_subscription_id=subscription.pk)
