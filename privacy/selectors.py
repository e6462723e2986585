"""Reads of the privacy app: the effective retention, what the next purge would delete, erasure requests with their
subscribers' confirmations, suppressions."""

from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone

from calls.models import Call, Recording
from orgs.models import Organization
from orgs.tenancy import get_for_org, whole_org
from webhooks.models import Delivery

from .digests import phone_digest
from .models import (
    DEFAULT_RECORDINGS_DAYS,
    DEFAULT_TRANSCRIPTS_DAYS,
    ErasureRequest,
    LocationRetention,
    RetentionPolicy,
    Suppression,
)


def retention_get(*, org: Organization) -> dict:
    """`{recordings_days, transcripts_days, locations: [{location_id, recordings_days, transcripts_days}]}`: the
    organization's row, or a new organization's defaults when it has none."""
    policy = RetentionPolicy.objects.filter(organization_id=org.pk).first()
    if policy is None:
        recordings, transcripts = DEFAULT_RECORDINGS_DAYS, DEFAULT_TRANSCRIPTS_DAYS
    else:
        recordings, transcripts = policy.recordings_days, policy.transcripts_days
    locations = LocationRetention.objects.filter(organization_id=org.pk).order_by("location__name", "location_id")
    return {
        "recordings_days": recordings,
        "transcripts_days": transcripts,
        "locations": [{"location_id": row.location_id, "recordings_days": row.recordings_days,
                       "transcripts_days": row.transcripts_days} for row in locations],
    }


def expiry_rules(*, org: Organization, part: str, now: datetime, prefix: str = "") -> list[tuple[Q, datetime]]:
    """For one part (`recordings_days` or `transcripts_days`): `[(which calls, cutoff)]`, a call being due when it
    started before its cutoff. The organization's days rule the calls of locations without their own entry (and
    those of no location). `prefix` reaches the call from another row (`call__`)."""
    policy = retention_get(org=org)
    rules = []
    own = [entry["location_id"] for entry in policy["locations"]]
    if policy[part] is not None:
        elsewhere = ~Q(**{f"{prefix}location_id__in": own}) | Q(**{f"{prefix}location_id__isnull": True})
        rules.append((elsewhere if own else Q(), now - timedelta(days=policy[part])))
    for entry in policy["locations"]:
        if entry[part] is not None:
            rules.append((Q(**{f"{prefix}location_id": entry["location_id"]}), now - timedelta(days=entry[part])))
    return rules


def _due(rules, prefix: str) -> Q:
    query = Q(pk__in=[])
    for where, cutoff in rules:
        query |= where & Q(**{f"{prefix}started_at__lt": cutoff})
    return query


def due_calls(*, org: Organization, now: datetime):
    """Calls whose transcript part is due (still kept, started before their cutoff)."""
    rules = expiry_rules(org=org, part="transcripts_days", now=now)
    return Call.objects.filter(_due(rules, ""), organization_id=org.pk, content_deleted_at__isnull=True)


def due_recordings(*, org: Organization, now: datetime):
    """Recordings that are due (of calls started before their cutoff)."""
    rules = expiry_rules(org=org, part="recordings_days", now=now, prefix="call__")
    return Recording.objects.filter(_due(rules, "call__"), organization_id=org.pk)


def retention_preview(*, org: Organization, now: datetime | None = None) -> dict:
    """What the next purge would delete now: `{"transcripts": n, "recordings": n}`."""
    now = now or timezone.now()
    return {"transcripts": due_calls(org=org, now=now).count(), "recordings": due_recordings(org=org, now=now).count()}


def erasure_request_list(*, org: Organization):
    return ErasureRequest.objects.for_org(org).order_by("-created_at", "-id")


def erasure_request_get(*, org: Organization, request_id) -> ErasureRequest:
    return get_for_org(ErasureRequest, org, request_id)


def erasure_confirmations(requests) -> dict:
    """`{request id: [{subscription_id, delivered_at}]}`: who received each request's `contact.erased` and when a
    2xx acknowledged it (null until then). One query for a page of requests."""
    by_event = {request.event_id: request.pk for request in requests if request.event_id}
    out = {request.pk: [] for request in requests}
    rows = (Delivery.objects.filter(event_id__in=list(by_event)).order_by("created_at", "subscription_id")
            .values_list("event_id", "subscription_id", "succeeded_at"))
    for event_id, subscription_id, succeeded_at in rows:
        out[by_event[event_id]].append({"subscription_id": subscription_id, "delivered_at": succeeded_at})
    return out


def suppression_list(*, org: Organization):
    return Suppression.objects.for_org(org).order_by("-created_at", "-id")


def suppression_get(*, org: Organization, suppression_id) -> Suppression:
    return get_for_org(Suppression, org, suppression_id)


def number_is_suppressed(org: Organization, phone_number: str) -> bool:
    """Whether `phone_number` (E.164) is on the organization's suppression list: one index read of its digest."""
    return Suppression.objects.filter(organization_id=whole_org(org).pk,
                                      phone_digest=phone_digest(org.pk, phone_number)).exists()
