"""Org-scoped reads of the event log: the feed (`GET /v1/events`), one event with its deliveries, and a call's trace.

A principal limited to locations (orgs.tenancy.scoped) sees the events at those locations only (Event.location_rule:
a location-less event is the whole organization's), each with its deliveries to the subscriptions it sees.

An event is visible for 30 days (retention.RETENTION, the delivery log's retention): older ones answer 404 even
while a row still exists, so what a client sees never depends on when the daily purge last ran.
"""

import json
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.db.models import Prefetch
from django.utils import timezone

from core.timefmt import iso_ms
from orgs.tenancy import get_for_org

from .catalog import RECEIVER_ONLY, REDACTED
from .models import Delivery, Event
from .retention import RETENTION


def _visible(org):
    return Event.objects.for_org(org).filter(created_at__gte=timezone.now() - RETENTION)


def with_deliveries(queryset, *, org):
    """`queryset` with each event's deliveries (and their subscriptions) as `delivery_list`: one more query. Only
    the deliveries to subscriptions `org` sees (a principal limited to locations: not the organization-wide ones)."""
    return queryset.prefetch_related(
        Prefetch(
            "deliveries",
            queryset=Delivery.objects.for_org(org).select_related("subscription").order_by("created_at", "pk"),
            to_attr="delivery_list",
        )
    )


def event_feed(*, org, type=None, since=None, until=None, call_id=None):  # noqa: A002 - the API's filter name
    """The org's visible events matching the filters (a queryset; the API pages it newest first). `since` and
    `until` bound `created_at`, both inclusive."""
    events = _visible(org)
    if type:
        events = events.filter(type=type)
    if since:
        events = events.filter(created_at__gte=since)
    if until:
        events = events.filter(created_at__lte=until)
    if call_id:
        events = events.filter(call_id=call_id)
    return events


def event_get(*, org, event_id) -> Event:
    """One visible event of the org with `delivery_list`, or NotFound (another org's, expired or unknown id)."""
    return get_for_org(with_deliveries(_visible(org), org=org), org, event_id)


def call_trace(*, org, call_id) -> list[Event]:
    """Every visible event of one call, oldest first, each with `delivery_list`: two queries whatever their number."""
    return list(with_deliveries(_visible(org).filter(call_id=call_id), org=org).order_by("created_at", "pk"))


def envelope(event: Event) -> dict:
    """The envelope as delivered, parsed from the stored bytes, with the credentials meant for its receivers alone
    redacted (catalog.RECEIVER_ONLY). Every read of the event log (API and dashboard) goes through here."""
    body = json.loads(event.payload)
    for field, parameter in RECEIVER_ONLY.get(event.type, ()):
        data = body.get("data")
        if isinstance(data, dict) and isinstance(data.get(field), str):
            data[field] = _redact_parameter(data[field], parameter)
    return body


def _redact_parameter(url: str, parameter: str) -> str:
    parts = urlsplit(url)
    query = [(name, REDACTED if name == parameter else value) for name, value in parse_qsl(parts.query, True)]
    return urlunsplit(parts._replace(query=urlencode(query)))


def delivery_summary(delivery: Delivery) -> dict:
    return {
        "subscription_id": str(delivery.subscription_id),
        "status": delivery.status,
        "attempts": delivery.attempt_count,
        "last_attempt_at": iso_ms(delivery.last_attempt_at),
        "last_status_code": delivery.last_status_code,
    }
