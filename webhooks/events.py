"""`emit`: THE one way any code emits a webhook event (also exported as `webhooks.services.emit`).

    from webhooks.services import emit

    with transaction.atomic():
        order.save(...)
        emit(org=order.organization, type="call_order.status_changed", data={...})

The event row, its envelope bytes and one delivery per matching subscription are written inside the
caller's transaction; the deliveries go to the broker only after that transaction commits. A rolled-back
change emits nothing; a committed one loses nothing (the sweeper enqueues what the broker missed).
"""

import datetime as dt
import json
import logging
import uuid
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from voiceagent.timefmt import iso_ms

from .errors import UnknownEventType
from .models import API_VERSION, EVENT_TYPES, Delivery, Event, Subscription

logger = logging.getLogger("webhooks")


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


def emit(*, org, type: str, data: dict) -> Event:  # noqa: A002 - the spec's field name
    """Writes the event and its deliveries in the current transaction; enqueues them after commit.

    `type` must be one of the nine spec types (UnknownEventType otherwise: a bug in the caller). `data` is
    serialized once, here; datetimes become millisecond-Z strings, uuids strings. Subscriptions that are
    enabled, belong to `org` and list `type` each get one pending delivery, due now.
    """
    if type not in EVENT_TYPES:
        raise UnknownEventType(f"Unknown event type {type!r}")
    now = timezone.now()
    created_at = now.replace(microsecond=now.microsecond // 1000 * 1000)
    event_id = Event.new_id()
    payload = envelope_bytes(event_id=event_id, type=type, created_at=created_at, data=data)
    with transaction.atomic():
        event = Event.objects.create(
            id=event_id, organization=org, type=type, api_version=API_VERSION, created_at=created_at, payload=payload
        )
        subscriptions = [
            sub
            for sub in Subscription.objects.for_org(org).filter(enabled=True).only("id", "events")
            if type in sub.events  # JSON containment is not portable to SQLite; an org has few subscriptions
        ]
        deliveries = Delivery.objects.bulk_create(
            [
                Delivery(
                    organization=org, event=event, subscription=sub, next_attempt_at=now, enqueued_at=now
                )
                for sub in subscriptions
            ]
        )
        ids = [str(delivery.pk) for delivery in deliveries]
        if ids:
            from .dispatch import enqueue

            transaction.on_commit(lambda: enqueue(ids))
    return event
