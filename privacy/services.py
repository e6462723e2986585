"""Writes of the privacy app: the retention policy, the purge that applies it, erasure requests and the erasure
itself, suppressions. Content is deleted by calls.services.content, the one definition of a call's content.

Nothing written here holds a caller's number, name or words: audit entries keep ids, counts and digests
(docs/privacy.md), so an erasure never has to touch the audit chain.
"""

import hashlib
import logging
import time
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from audit import services as audit
from calls.models import Booking, Call, CallbackRequest, Message
from calls.services.content import PARTS, RECORDING, TRANSCRIPT, calls_content_delete
from contacts.models import Contact
from core.actors import current_actor
from core.errors import ValidationFailed
from orgs.models import Location, Organization
from orgs.phones import normalize_phone
from orgs.tenancy import check_whole_org, get_for_org, whole_org
from webhooks.models import Event
from webhooks.services import emit, events_tombstone

from . import tasks
from .digests import masked, phone_digest
from .models import MAX_DAYS, MIN_DAYS, ErasureRequest, LocationRetention, RetentionPolicy, Suppression
from .selectors import due_calls, due_recordings, retention_get

logger = logging.getLogger("privacy")

ERASURE_BATCH = 200
DAYS_MESSAGE = f"A whole number of days from {MIN_DAYS} to {MAX_DAYS:,}, or null to keep."


# --- retention ---------------------------------------------------------------------------------------------------


def _days(value, field: str, errors: dict):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_DAYS <= value <= MAX_DAYS:
        errors.setdefault(field, []).append(DAYS_MESSAGE)
        return None
    return value


_UNSET = object()


def retention_update(*, org: Organization, recordings_days=_UNSET, transcripts_days=_UNSET, locations=_UNSET) -> dict:
    """Sets the organization's retention (the keys given; `locations`, when given, replaces every location's entry)
    and returns it as `retention_get` does. Audited (`retention.updated`). ValidationFailed for days outside
    1..3,650 and for a location that is not the organization's; `Forbidden` within a location scope."""
    check_whole_org(org, "the retention policy")
    errors: dict = {}
    changes = {}
    if recordings_days is not _UNSET:
        changes["recordings_days"] = _days(recordings_days, "recordings_days", errors)
    if transcripts_days is not _UNSET:
        changes["transcripts_days"] = _days(transcripts_days, "transcripts_days", errors)
    entries = None
    if locations is not _UNSET:
        entries = _clean_locations(org, locations, errors)
    if errors:
        raise ValidationFailed(field_errors=errors)
    with transaction.atomic():
        before = retention_get(org=org)
        policy, _ = RetentionPolicy.objects.select_for_update().get_or_create(
            organization_id=org.pk,
            defaults={"recordings_days": before["recordings_days"], "transcripts_days": before["transcripts_days"]},
        )
        for field, value in changes.items():
            setattr(policy, field, value)
        policy.save()
        if entries is not None:
            LocationRetention.objects.filter(organization_id=org.pk).delete()
            LocationRetention.objects.bulk_create([
                LocationRetention(organization_id=org.pk, location_id=entry["location_id"],
                                  recordings_days=entry["recordings_days"], transcripts_days=entry["transcripts_days"])
                for entry in entries
            ])
        after = retention_get(org=org)
        diff = audit.diff(_audited(before), _audited(after))
        if diff:
            audit.record(org=org, action="retention.updated", target_type="retention", target_id=org.pk,
                         target_label="retention policy", changes=diff)
    return after


def _audited(policy: dict) -> dict:
    return {"recordings_days": policy["recordings_days"], "transcripts_days": policy["transcripts_days"],
            "locations": [{key: str(value) if key == "location_id" else value for key, value in entry.items()}
                          for entry in policy["locations"]]}


def _clean_locations(org: Organization, locations, errors: dict) -> list[dict]:
    if not isinstance(locations, list):
        errors.setdefault("locations", []).append("A list of {location_id, recordings_days, transcripts_days}.")
        return []
    entries, seen = [], set()
    ids = Location.objects.filter(organization_id=org.pk)
    for index, entry in enumerate(locations):
        field = f"locations.{index}"
        if not isinstance(entry, dict) or set(entry) - {"location_id", "recordings_days", "transcripts_days"} \
                or "location_id" not in entry:
            errors.setdefault(field, []).append("An object {location_id, recordings_days, transcripts_days}.")
            continue
        try:
            location = get_for_org(ids, org, entry["location_id"])
        except Exception:  # noqa: BLE001 - NotFound or a malformed id: the same answer as another org's location
            errors.setdefault(f"{field}.location_id", []).append("Not a location of this organization.")
            continue
        if location.pk in seen:
            errors.setdefault(f"{field}.location_id", []).append("This location is listed twice.")
            continue
        seen.add(location.pk)
        entries.append({
            "location_id": location.pk,
            "recordings_days": _days(entry.get("recordings_days"), f"{field}.recordings_days", errors),
            "transcripts_days": _days(entry.get("transcripts_days"), f"{field}.transcripts_days", errors),
        })
    return entries


# --- the purge ---------------------------------------------------------------------------------------------------


def retention_purge(*, org: Organization, now: datetime | None = None, batch_size: int | None = None,
                    pause: float | None = None) -> dict:
    """Deletes the organization's expired content: the transcript part of calls past `transcripts_days`, the
    recordings of calls past `recordings_days` (a location's entry in place of the organization's). In batches of
    short transactions that skip a call another transaction holds (it goes at the next run), so ingestion is never
    blocked for long; idempotent (a second run finds nothing). Appends one `retention.purged` audit entry when it
    deleted something: the counts and a SHA-256 over the sorted ids of the calls it touched.
    After each batch it rests `pause` (settings.RETENTION_PURGE_PAUSE) times as long as the batch took, so the
    completions it shares the database (and a small machine's cores) with keep their latency.
    Returns `{"transcripts": n, "recordings": n, "calls_sha256": hex}`."""
    now = now or timezone.now()
    batch_size = batch_size or settings.RETENTION_PURGE_BATCH
    pause = settings.RETENTION_PURGE_PAUSE if pause is None else pause
    org = whole_org(org)
    touched: set = set()
    counts = {"transcripts": 0, "recordings": 0}

    def delete(ids, parts):
        deleted = calls_content_delete(org=org, call_ids=ids, parts=parts, reason="retention", now=now,
                                       skip_locked=True, audit_each=False)
        for gone in deleted.values():
            counts["transcripts"] += TRANSCRIPT in gone
            counts["recordings"] += RECORDING in gone
        touched.update(deleted)

    recordings_due = due_recordings(org=org, now=now)
    for ids in _rested(_batches(due_calls(org=org, now=now), ("started_at", "pk"), batch_size), pause):
        # A call whose recording is due as well loses both at once: one `call.content_deleted` per call and run.
        both = set(recordings_due.filter(call_id__in=ids).values_list("call_id", flat=True))
        delete([pk for pk in ids if pk in both], [TRANSCRIPT, RECORDING])
        delete([pk for pk in ids if pk not in both], [TRANSCRIPT])
    for ids in _rested(_batches(recordings_due, ("call_id",), batch_size), pause):
        delete(ids, [RECORDING])
    digest = hashlib.sha256("\n".join(sorted(str(pk) for pk in touched)).encode()).hexdigest()
    result = {**counts, "calls_sha256": digest}
    if touched:
        with transaction.atomic():
            audit.record(org=org, action="retention.purged", target_type="retention", target_id=org.pk,
                         target_label="retention purge", changes={key: [None, value] for key, value in result.items()})
    return result


def _batches(rows, keys: tuple[str, ...], size: int):
    """The values of the last of `keys` over `rows`, ordered by `keys`, `size` at a time: keyset pages, so rows a
    batch skipped (locked) are not read again by the next one. Calls go by (`started_at`, id): each page is then one
    range of the index of kept calls (organization, started_at), where by id alone every page filtered the calls
    that are not due out of a walk over the primary key."""
    after = None
    while True:
        page = rows.order_by(*keys)
        if after is not None:
            *firsts, last = keys
            if firsts:  # (first, last) > after, as a range on the first key the index can use
                page = page.filter(**{f"{firsts[0]}__gte": after[0]}).exclude(
                    **{firsts[0]: after[0], f"{last}__lte": after[1]})
            else:
                page = page.filter(**{f"{last}__gt": after[0]})
        rows_of_page = list(page.values_list(*keys)[:size])
        if not rows_of_page:
            return
        after = rows_of_page[-1]
        yield [row[-1] for row in rows_of_page]


def _rested(batches, pause: float):
    """`batches`, resting after each `pause` times as long as the caller's work on it took."""
    for batch in batches:
        started = time.monotonic()
        yield batch
        if pause > 0:
            time.sleep(pause * (time.monotonic() - started))


def retention_purge_all(*, now: datetime | None = None) -> dict:
    """`retention_purge` for every organization, one after another (an organization's failure is logged and the
    next goes on). Returns `{org id: result}`."""
    results = {}
    for org in Organization.objects.order_by("pk"):
        try:
            results[org.pk] = retention_purge(org=org, now=now)
        except Exception:
            logger.exception("Retention purge failed for organization %s", org.pk)
    return results


# --- erasure -----------------------------------------------------------------------------------------------------


def erasure_request_create(*, org: Organization, phone_number=None, contact_id=None, suppress: bool = False
                           ) -> ErasureRequest:
    """Asks for a caller's erasure: resolves, now, what it will delete (the contact, the calls from the number or
    linked to the contact, the bookings and follow-ups naming them) and keeps it as ids, so the number is never
    stored (a keyed digest and a masked form only) nor handed to the worker. With `suppress`, the number goes on the
    suppression list at once. Audited; the worker (privacy.tasks.run_erasure) is enqueued after commit."""
    check_whole_org(org, "erasure requests")
    if (phone_number is None) == (contact_id is None):
        message = "Give exactly one of phone_number and contact_id."
        raise ValidationFailed(field_errors={"phone_number": [message], "contact_id": [message]})
    if not isinstance(suppress, bool):
        raise ValidationFailed(field_errors={"suppress": ["Must be a valid boolean."]})
    contact = None
    if contact_id is not None:
        contact = get_for_org(Contact, org, contact_id)
        number = contact.phone_number
    else:
        number = normalize_phone(phone_number, region=org.default_phone_region, field="phone_number")
        contact = Contact.objects.filter(organization_id=org.pk, phone_number=number).first()
    digest = phone_digest(org.pk, number)
    with transaction.atomic():
        calls = Call.objects.filter(organization_id=org.pk, from_number=number)
        if contact is not None:
            calls = calls | Call.objects.filter(organization_id=org.pk, contact_id=contact.pk)
        call_ids = sorted(set(calls.values_list("pk", flat=True)), key=str)
        request = ErasureRequest.objects.create(
            organization_id=org.pk, phone_digest=digest, phone_number_masked=masked(number),
            contact_id=contact.pk if contact else None, suppress=suppress, call_ids=call_ids,
            targets=_targets(org, number, contact, call_ids), requested_by=current_actor().label[:300],
        )
        if suppress:
            _suppress(org=org, digest=digest, number=number, request=request)
        audit.record(org=org, action="privacy.erasure_requested", target=request, target_type="erasure_request",
                     target_label=f"erasure {request.pk}",
                     changes={"phone_digest": [None, digest], "contact_id": [None, request.contact_id],
                              "suppress": [None, suppress], "calls": [None, len(call_ids)]})
        tasks.run_erasure_on_commit(request.pk)
    return request


def _targets(org, number: str, contact, call_ids) -> dict:
    """The follow-ups and bookings that name the caller: by number, by contact, or on one of the calls."""
    def ids(model, *, number_field, call_field="call_id", contact_field="contact_id"):
        rows = model.objects.filter(organization_id=org.pk)
        query = rows.filter(**{number_field: number}) | rows.filter(**{f"{call_field}__in": call_ids})
        if contact is not None and contact_field:
            query = query | rows.filter(**{contact_field: contact.pk})
        return sorted({str(pk) for pk in query.values_list("pk", flat=True)})

    return {
        "bookings": ids(Booking, number_field="contact_phone"),
        "callbacks": ids(CallbackRequest, number_field="callback_number"),
        "messages": ids(Message, number_field="callback_number", contact_field=None),
    }


def _suppress(*, org, digest: str, number: str, request) -> None:
    try:
        with transaction.atomic():
            Suppression.objects.create(organization_id=org.pk, phone_digest=digest, phone_number_masked=masked(number),
                                       erasure_request=request)
    except IntegrityError:
        pass  # on the list already: once is enough


def erasure_run(*, request_id) -> ErasureRequest | None:
    """Carries out an erasure request (the worker's task): deletes the content of its calls (clearing their
    `from_number`), the caller's details in its bookings and follow-ups, the contact, and every event body naming
    them; then emits `contact.erased` to every subscription that gets contact or call events and completes the
    request with its counts (audited, `privacy.erasure_completed`). Idempotent: a request already completed is left
    as is, and a run cut short starts again where the deletions stand."""
    with transaction.atomic():
        request = ErasureRequest.objects.select_for_update().filter(pk=request_id).first()
        if request is None or request.status == ErasureRequest.Status.COMPLETED:
            return request
        request.status = ErasureRequest.Status.RUNNING
        request.started_at = request.started_at or timezone.now()
        request.save(update_fields=["status", "started_at", "updated_at"])
    org = request.organization
    ids = list(request.call_ids)
    for start in range(0, len(ids), ERASURE_BATCH):
        batch = ids[start:start + ERASURE_BATCH]
        with transaction.atomic():
            calls_content_delete(org=org, call_ids=batch, parts=PARTS, reason="erasure", audit_each=False)
            Call.objects.filter(organization_id=org.pk, pk__in=batch).exclude(from_number=None).update(
                from_number=None, contact=None)
    with transaction.atomic():
        request = ErasureRequest.objects.select_for_update().get(pk=request.pk)
        if request.status == ErasureRequest.Status.COMPLETED:
            return request
        targets = request.targets or {}
        now = timezone.now()
        bookings = Booking.objects.filter(organization_id=org.pk, pk__in=targets.get("bookings", []))
        bookings.update(contact_name=None, contact_email=None, contact_phone=None, contact=None, updated_at=now)
        callbacks = CallbackRequest.objects.filter(organization_id=org.pk, pk__in=targets.get("callbacks", []))
        callbacks.update(callback_number=None, reason="", custom_window=None, contact=None, updated_at=now)
        messages = Message.objects.filter(organization_id=org.pk, pk__in=targets.get("messages", []))
        messages.update(callback_number=None, caller_name=None, message="", updated_at=now)
        booking_calls = list(bookings.exclude(call_id=None).values_list("call_id", flat=True))
        callback_calls = list(callbacks.values_list("call_id", flat=True))
        message_calls = list(messages.values_list("call_id", flat=True))
        events_tombstone(org=org, call_ids={*booking_calls, *callback_calls, *message_calls}, reason="erasure")
        contacts = 0
        if request.contact_id is not None:
            contacts, _ = Contact.objects.filter(organization_id=org.pk, pk=request.contact_id).delete()
            _tombstone_contact_events(org, request.contact_id)
        event = emit(org=org, type="contact.erased", data={
            "erasure_request_id": str(request.pk),
            "contact_id": str(request.contact_id) if request.contact_id else None,
            "call_ids": [str(pk) for pk in ids],
        })
        request.counts = {"calls": len(ids), "contacts": contacts, "bookings": len(targets.get("bookings", [])),
                          "followups": len(targets.get("callbacks", [])) + len(targets.get("messages", []))}
        request.status = ErasureRequest.Status.COMPLETED
        request.event_id = event.pk
        request.completed_at = now
        request.save(update_fields=["counts", "status", "event_id", "completed_at", "updated_at"])
        audit.record(org=org, action="privacy.erasure_completed", target=request, target_type="erasure_request",
                     target_label=f"erasure {request.pk}",
                     changes={"counts": [None, request.counts], "event_id": [None, event.pk]})
    return request


def _tombstone_contact_events(org, contact_id) -> None:
    """The events that carry the contact's details without naming one of its calls (a contact made through the
    API has no first call): found by the contact id in their stored body."""
    events = Event.objects.filter(organization_id=org.pk, type="contact.created").extra(  # noqa: S610 - no input
        where=["position(convert_to(%s, 'UTF8') in payload) > 0"], params=[str(contact_id)])
    events_tombstone(org=org, call_ids=[], reason="erasure", extra_event_ids=events.values_list("pk", flat=True))


def suppression_delete(*, suppression: Suppression) -> None:
    """Takes a number off the suppression list: its later calls keep their content again. Audited (the digest)."""
    check_whole_org(suppression.organization, "suppressions")
    with transaction.atomic():
        digest = suppression.phone_digest
        Suppression.objects.filter(pk=suppression.pk).delete()
        audit.record(org=suppression.organization, action="privacy.suppression_deleted", target_type="suppression",
                     target_id=suppression.pk, target_label=f"suppression {suppression.pk}",
                     changes={"phone_digest": [digest, None]})
