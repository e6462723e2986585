"""Writes of the calls app. Keyword-only, one transaction each, and every event emitted explicitly.

The agent runtime (calls/runtime), the public API (calls/api) and the dashboard all come through here.
Idempotency under retries is the database's job: the runtime's call id and event ids sit under unique
constraints, a retried insert fails inside a savepoint, and the service answers with the stored row.
"""

import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.files.base import ContentFile
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from contacts.models import Contact
from contacts.services import contact_get_or_create_for_caller
from notifications.services import notify_callback_requested, notify_escalation_triggered, notify_message_taken
from orgs.models import Location, Organization, TeamMember
from orgs.phones import normalize_phone
from orgs.services import knowledge_version_bump
from voiceagent.errors import ValidationFailed
from webhooks.services import emit

from . import events
from .errors import CallNotFound, CancellationWindowClosed, Conflict, InvalidTransition, NotFound, RecordingDisabled
from .models import (
    ORDER_TRANSITIONS,
    UNSCORABLE_CLASSIFICATIONS,
    Booking,
    Calendar,
    Call,
    CallbackRequest,
    CancelSource,
    Classification,
    Escalation,
    EscalationRule,
    Message,
    Order,
    OrderCounter,
    OrderStatus,
    Recording,
    ToolEvent,
)

logger = logging.getLogger("calls")

TIME_UNITS = {"minutes": 60, "hours": 3600, "days": 86400}
CONTENT_TYPE_EXTENSIONS = {
    "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3", "audio/mp4": "m4a",
    "audio/ogg": "ogg", "audio/webm": "webm", "audio/flac": "flac",
}


# --- lookups shared by the services ------------------------------------------------------------------------


def _resolve(model, org: Organization, pk, field: str):
    """An org-owned row named in a request body, or 404: another org's id looks exactly like a missing one."""
    if pk is None:
        return None
    obj = model.objects.for_org(org).filter(pk=pk).first()
    if obj is None:
        raise NotFound(f"{field} not found")
    return obj


def _locked_call(*, org: Organization, runtime_call_id: str) -> Call:
    """The call under `select_for_update`; the caller holds a transaction. Serializes every runtime write per call."""
    call = Call.objects.select_for_update().filter(organization=org, runtime_call_id=runtime_call_id).first()
    if call is None:
        raise CallNotFound("call not found")
    return call


def _existing_contact(org: Organization, phone_number: str | None) -> Contact | None:
    if not phone_number:
        return None
    return Contact.objects.for_org(org).filter(phone_number=phone_number).first()


def _phone(org: Organization, raw: str | None, field: str) -> str | None:
    """A phone number from the runtime in E.164 (the org's region for national numbers); None stays None."""
    if raw is None or raw == "":
        return None
    return normalize_phone(raw, region=org.default_phone_region, field=field)


def _collapse(labels: list[str]) -> list[str]:
    trail: list[str] = []
    for label in labels:
        if label and (not trail or trail[-1] != label):
            trail.append(label)
    return trail


def _normalize_quote(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


# --- call start and completion -----------------------------------------------------------------------------


def call_start(
    *,
    org: Organization,
    runtime_call_id: str,
    started_at: datetime,
    from_number: str | None = None,
    location_id=None,
    direction: str = Call.Direction.INBOUND,
) -> tuple[Call, bool]:
    """Creates the call for the runtime's call id, or returns the existing one: (call, created).

    A returning caller (a contact with this number already exists) is linked at once, so mid-call events
    carry the contact; a new caller's contact is made at completion, only for real engagement.
    """
    with transaction.atomic():
        existing = Call.objects.filter(organization=org, runtime_call_id=runtime_call_id).first()
        if existing is not None:
            return existing, False
        location = _resolve(Location, org, location_id, "location_id")
        from_number = _phone(org, from_number, "from_number")
        call = Call(
            organization=org,
            runtime_call_id=runtime_call_id,
            started_at=started_at,
            from_number=from_number,
            location=location,
            direction=direction,
            contact=_existing_contact(org, from_number),
        )
        try:
            with transaction.atomic():
                call.save(force_insert=True)
        except IntegrityError:
            # A concurrent retry inserted it first (the unique constraint decided); answer with that row.
            return Call.objects.get(organization=org, runtime_call_id=runtime_call_id), False
        return call, True


@dataclass
class OrderInput:
    profile_id: object
    profile_name: str
    items: list[dict]
    order_answers: list[dict]
    fulfillment_estimate_value: float
    fulfillment_estimate_unit: str
    fulfillment_estimate_label: str | None = None
    fulfillment_varies: bool = False
    cancellation_allowed: bool = True
    cancellation_window_value: float = 0
    cancellation_window_unit: str = "minutes"
    total_cents: int | None = None
    placed_at: datetime | None = None
    payment_status: str | None = None
    external_order_id: str | None = None
    payment_collected_at: datetime | None = None


def _next_order_number(org: Organization) -> int:
    """The org's next `call_order_number`, in one statement: an upsert of the org's counter row that returns the
    new value. The statement holds the counter's row lock until commit, so numbers never repeat under
    concurrency (and a rolled-back order gives its number back). The caller holds the transaction."""
    if connection.vendor in ("postgresql", "sqlite") and connection.features.can_return_columns_from_insert:
        quote, meta = connection.ops.quote_name, OrderCounter._meta
        table, org_column = quote(meta.db_table), quote(meta.get_field("organization").column)
        number = quote(meta.get_field("last_number").column)
        # Identifiers come from the model's metadata; the org id is a bound parameter.
        sql = (
            f"INSERT INTO {table} ({org_column}, {number}) VALUES (%s, 1) "  # noqa: S608
            f"ON CONFLICT ({org_column}) DO UPDATE SET {number} = {table}.{number} + 1 RETURNING {number}"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [meta.get_field("organization").get_db_prep_value(org.pk, connection)])
            return cursor.fetchone()[0]
    # Other databases (and SQLite before 3.35, without RETURNING): the row, its lock, then an F() increment.
    OrderCounter.objects.get_or_create(organization=org)  # absorbs a racing insert in its own savepoint
    counter = OrderCounter.objects.select_for_update().get(organization=org)
    counter.last_number = F("last_number") + 1
    counter.save(update_fields=["last_number"])
    counter.refresh_from_db(fields=["last_number"])
    return counter.last_number


def _order_items(items: list[dict]) -> tuple[list[dict], int]:
    """Items in the spec's shape with `line_total_cents` computed: quantity x (unit price + modifier prices)."""
    shaped, subtotal = [], 0
    for item in items:
        modifiers = [
            {"group_id": str(m["group_id"]), "group_name": m["group_name"], "option_name": m["option_name"],
             "price_cents": int(m["price_cents"])}
            for m in item.get("modifiers", [])
        ]
        answers = [
            {"question_id": str(a["question_id"]), "prompt": a["prompt"], "answer": a["answer"]}
            for a in item.get("answers", [])
        ]
        unit = int(item["unit_price_cents"])
        line_total = int(item["quantity"]) * (unit + sum(m["price_cents"] for m in modifiers))
        subtotal += line_total
        shaped.append({
            "catalog_item_id": str(item["catalog_item_id"]), "name": item["name"], "quantity": int(item["quantity"]),
            "modifiers": modifiers, "answers": answers, "unit_price_cents": unit, "line_total_cents": line_total,
        })
    return shaped, subtotal


def _order_create(*, call: Call, data: OrderInput, placed_at: datetime) -> Order:
    """Places the call's order (status `new`). The caller holds the call's lock and the transaction."""
    items, subtotal = _order_items(data.items)
    placed_at = data.placed_at or placed_at
    window_value = data.cancellation_window_value if data.cancellation_allowed else 0
    return Order.objects.create(
        organization=call.organization,
        call=call,
        call_order_number=_next_order_number(call.organization),
        status=OrderStatus.NEW,
        profile_id=data.profile_id,
        profile_name=data.profile_name,
        items=items,
        order_answers=[
            {"question_id": str(a["question_id"]), "prompt": a["prompt"], "answer": a["answer"]}
            for a in data.order_answers
        ],
        subtotal_cents=subtotal,
        total_cents=subtotal if data.total_cents is None else data.total_cents,
        fulfillment_estimate_value=data.fulfillment_estimate_value,
        fulfillment_estimate_unit=data.fulfillment_estimate_unit,
        fulfillment_estimate_label=data.fulfillment_estimate_label,
        fulfillment_varies=data.fulfillment_varies,
        expected_fulfillment_at=placed_at
        + timedelta(seconds=data.fulfillment_estimate_value * TIME_UNITS[data.fulfillment_estimate_unit]),
        cancellation_allowed=data.cancellation_allowed,
        cancellation_window_value=window_value,
        cancellation_window_unit=data.cancellation_window_unit,
        cancellation_deadline_at=placed_at
        + timedelta(seconds=window_value * TIME_UNITS[data.cancellation_window_unit]),
        placed_at=placed_at,
        payment_status=data.payment_status,
        external_order_id=data.external_order_id,
        payment_collected_at=data.payment_collected_at,
    )


def _checks_with_verification(checks: list[dict], transcript: list[dict]) -> list[dict]:
    """Quality checks in the stored shape. `verification` is ours to decide: `verified` when every quoted
    piece of evidence is found in the transcript (whitespace and case aside), else `unverified`."""
    corpus = [_normalize_quote(turn["text"]) for turn in transcript]
    shaped = []
    for check in checks:
        evidence = [str(quote) for quote in check.get("evidence", [])]
        verified = all(any(_normalize_quote(q) in text for text in corpus) for q in evidence)
        shaped.append({
            "name": check["name"],
            "verdict": check["verdict"],
            "evidence": evidence,
            "gap_type": check.get("gap_type"),
            "verification": "verified" if verified else "unverified",
        })
    return shaped


def _score_from_checks(checks: list[dict]) -> int | None:
    judged = [c for c in checks if c["verdict"] in ("pass", "fail")]
    if not judged:
        return None
    return round(100 * sum(c["verdict"] == "pass" for c in judged) / len(judged))


# What call_complete writes on the locked call (the start's fields and the trail belong to other writers).
COMPLETION_FIELDS = [
    "status", "ended_at", "duration_seconds", "classification", "disposition", "summary", "outcome", "outcome_tags",
    "transcript", "quality_checks", "caller_name", "caller_email", "scorable", "score", "contact", "updated_at",
]


def call_complete(
    *,
    org: Organization,
    runtime_call_id: str,
    ended_at: datetime,
    classification: str,
    disposition: str = Call.Disposition.COMPLETED,
    summary: str = "",
    outcome: str = "",
    outcome_tags: list[str] | None = None,
    transcript: list[dict] | None = None,
    quality_checks: list[dict] | None = None,
    score: int | None = None,
    duration_seconds: int | None = None,
    caller_name: str | None = None,
    caller_email: str | None = None,
    order: OrderInput | None = None,
    messages: list[dict] | None = None,
    start: dict | None = None,
) -> tuple[Call, bool]:
    """Records the finished call and emits what follows from it: (call, completed_now).

    Completing an already completed call changes nothing and emits nothing (a runtime retry). `start` (the
    call-start fields) lets a completion whose start was lost create the call. Real engagement: the call is
    scorable, a new caller becomes a contact (`contact.created`, unless the org turned auto-saving off), and
    `call.ended` and `call.message_taken` go out. The other classifications are unscorable and emit none of them.
    """
    if (outcome == "order") != (order is not None):
        raise ValidationFailed(field_errors={"order": ["An order is required if and only if the outcome is 'order'."]})
    if start is not None:
        call_start(org=org, runtime_call_id=runtime_call_id, **start)
    with transaction.atomic():
        call = _locked_call(org=org, runtime_call_id=runtime_call_id)
        if call.is_completed:
            return call, False
        if ended_at < call.started_at:
            raise ValidationFailed(field_errors={"ended_at": ["ended_at must not be before started_at."]})
        real = classification == Classification.REAL_ENGAGEMENT
        transcript = transcript or []
        checks = _checks_with_verification(quality_checks or [], transcript)
        call.status = Call.Status.COMPLETED
        call.ended_at = ended_at
        call.duration_seconds = (
            duration_seconds if duration_seconds is not None else int((ended_at - call.started_at).total_seconds())
        )
        call.classification = classification
        call.disposition = disposition
        call.summary = summary
        call.outcome = outcome
        call.outcome_tags = list(outcome_tags or [])
        call.transcript = transcript
        call.quality_checks = checks
        call.caller_name = caller_name or None
        call.caller_email = caller_email or None
        # Unscorable classifications never carry a score, whatever the runtime sent (spec, Resources: Call).
        call.scorable = classification not in UNSCORABLE_CLASSIFICATIONS
        call.score = (score if score is not None else _score_from_checks(checks)) if call.scorable else None

        contact_created = None
        if real and call.from_number:
            if org.auto_save_contacts:
                contact, created = contact_get_or_create_for_caller(
                    org=org, phone_number=call.from_number, name=caller_name, email=caller_email, call=call
                )
                call.contact = contact
                contact_created = contact if created else None
            elif call.contact_id is None:
                call.contact = _existing_contact(org, call.from_number)
        call.save(update_fields=COMPLETION_FIELDS)

        placed = _order_create(call=call, data=order, placed_at=ended_at) if order is not None else None
        taken = [
            _message_create(call=call, data=message, caller_name=caller_name) for message in (messages or [])
        ]

        if contact_created is not None:
            emit(org=org, type="contact.created", data=events.contact_created_data(contact_created, call))
        if real:
            emit(org=org, type="call.ended", data=events.call_ended_data(call, placed))
            for message in taken:
                emit(org=org, type="call.message_taken", data=events.message_taken_data(message, call))
                notify_message_taken(message=message, call=call)  # e-mailed exactly when announced
        return call, True


def _message_create(*, call: Call, data: dict, caller_name: str | None) -> Message:
    member = _resolve(TeamMember, call.organization, data.get("for_team_member_id"), "for_team_member_id")
    return Message.objects.create(
        organization=call.organization,
        call=call,
        for_team_member=member,
        for_team_member_name=data.get("for_team_member_name") or (member.name if member else None),
        message=data["message"],
        caller_name=data.get("caller_name") or caller_name or (call.contact.name if call.contact else None),
        callback_number=_phone(call.organization, data.get("callback_number"), "messages.callback_number")
        or call.from_number,
    )


# --- mid-call tool events ----------------------------------------------------------------------------------


def tool_event_record(
    *,
    org: Organization,
    runtime_call_id: str,
    runtime_event_id: str,
    type: str,
    label: str = "",
    offset_seconds: float | None = None,
    data: dict | None = None,
) -> tuple[dict, bool]:
    """Records one mid-call tool event and does what it asks, at once: (result, recorded_now).

    `callback_requested`, `escalation_triggered` and `appointment_booked` emit their events here, before the
    call is classified (the spec does not filter them). `order_cancel_requested` cancels the caller's order.
    `tool` only adds its label to the trail. A retried event id returns the first result and does nothing.
    """
    handler = TOOL_HANDLERS[type]
    with transaction.atomic():
        call = _locked_call(org=org, runtime_call_id=runtime_call_id)
        try:
            with transaction.atomic():
                event = ToolEvent.objects.create(
                    organization=org, call=call, runtime_event_id=runtime_event_id, type=type,
                    label=label or "", offset_seconds=offset_seconds,
                )
        except IntegrityError:
            previous = ToolEvent.objects.get(call=call, runtime_event_id=runtime_event_id)
            return previous.result, False
        event.result = handler(call=call, data=data or {}) if handler else {}
        event.save(update_fields=["result", "updated_at"])
        if event.label:
            _trail_refresh(call)
        return event.result, True


def _trail_refresh(call: Call) -> None:
    """The trail from the call's labelled tool events, in the order they fired, consecutive duplicates collapsed."""
    labels = (
        ToolEvent.objects.filter(call=call)
        .exclude(label="")
        .order_by(F("offset_seconds").asc(nulls_last=True), "created_at", "id")
        .values_list("label", flat=True)
    )
    call.trail = _collapse(list(labels))
    call.save(update_fields=["trail", "updated_at"])


def callback_request_create(*, call: Call, data: dict) -> dict:
    """A callback request on a call; emits `call.callback_requested`. The caller holds the call's lock."""
    org = call.organization
    window = data.get("requested_window", CallbackRequest.Window.ASAP)
    if (window == CallbackRequest.Window.CUSTOM) != bool(data.get("custom_window")):
        raise ValidationFailed(field_errors={"data.custom_window": [
            "custom_window is required when requested_window is 'custom', and only then."
        ]})
    member = _resolve(TeamMember, org, data.get("requested_team_member_id"), "requested_team_member_id")
    callback = CallbackRequest.objects.create(
        organization=org,
        call=call,
        contact_id=call.contact_id,
        callback_number=_phone(org, data.get("callback_number"), "data.callback_number") or call.from_number,
        requested_window=window,
        custom_window=data.get("custom_window") or None,
        reason=data.get("reason", ""),
        requested_team_member=member,
    )
    emit(org=org, type="call.callback_requested", data=events.callback_requested_data(callback, call))
    notify_callback_requested(callback=callback, call=call)  # the spec: e-mail the recipients in real time
    return {"callback_request_id": str(callback.pk)}


def escalation_create(*, call: Call, data: dict) -> dict:
    """An escalation rule matched and the caller was routed to a human; emits `call.escalation_triggered`."""
    org = call.organization
    rule = _resolve(EscalationRule, org, data.get("rule_id"), "rule_id")
    if rule is None:
        raise ValidationFailed(field_errors={"data.rule_id": ["This field is required."]})
    escalation = Escalation.objects.create(
        organization=org,
        call=call,
        rule=rule,
        rule_name=rule.name,
        destination_type=rule.destination_type,
        destination_team_member_id=rule.destination_team_member_id,
        destination_phone=rule.destination_phone
        or (rule.destination_team_member.phone_number if rule.destination_team_member_id else None),
        triggered_by=data.get("triggered_by", Escalation.TriggeredBy.KEYWORD),
        context=data.get("context", ""),
    )
    emit(org=org, type="call.escalation_triggered", data=events.escalation_triggered_data(escalation, call))
    notify_escalation_triggered(escalation=escalation, call=call)
    return {"escalation_id": str(escalation.pk)}


def booking_create(*, call: Call, data: dict) -> dict:
    """An appointment booked and confirmed on the call; emits `call.appointment_booked`.

    Contact details are best effort: what the caller confirmed on this call wins, then the contact record.
    """
    org = call.organization
    calendar = _resolve(Calendar, org, data.get("calendar_id"), "calendar_id")
    if calendar is None:
        raise ValidationFailed(field_errors={"data.calendar_id": ["This field is required."]})
    if data["end_at"] <= data["start_at"]:
        raise ValidationFailed(field_errors={"data.end_at": ["end_at must be after start_at."]})
    contact = call.contact
    booking = Booking.objects.create(
        organization=org,
        calendar=calendar,
        call=call,
        location_id=calendar.location_id or call.location_id,
        contact=contact,
        start_at=data["start_at"],
        end_at=data["end_at"],
        timezone=data.get("timezone") or calendar.timezone,
        contact_name=data.get("contact_name") or (contact.name if contact else None) or call.caller_name,
        contact_email=data.get("contact_email") or (contact.email if contact else None),
        contact_phone=_phone(org, data.get("contact_phone"), "data.contact_phone") or call.from_number,
    )
    emit(org=org, type="call.appointment_booked", data=events.appointment_booked_data(booking))
    return {"booking_id": str(booking.pk)}


def _order_cancel_from_call(*, call: Call, data: dict) -> dict:
    if not call.from_number:
        raise NotFound("no order for a withheld number")
    order, changed = order_cancel_by_caller(
        org=call.organization, phone_number=call.from_number, call_order_number=data.get("call_order_number")
    )
    return {"call_id": str(order.call_id), "call_order_number": order.call_order_number, "order_status": order.status}


TOOL_HANDLERS = {
    "tool": None,
    "callback_requested": callback_request_create,
    "escalation_triggered": escalation_create,
    "appointment_booked": booking_create,
    "order_cancel_requested": _order_cancel_from_call,
}


# --- orders ------------------------------------------------------------------------------------------------


def order_set_status(
    *, call: Call, status: str, changed_by: str | None, source: str, now: datetime | None = None
) -> tuple[Order, bool]:
    """Moves the call's order to `status`: (order, changed). Emits `call_order.status_changed` on a change.

    Runs under the order's row lock, so concurrent changes serialize and each event's `previous_status` is the
    status it really replaced. The same status again is a no-op (no event). `source` is who did it
    (`team_via_dashboard`, `team_via_api`, `caller_via_phone`) and becomes `canceled_by` on a cancellation;
    `changed_by` is a user id, an API key id, or None (the caller).
    """
    if status not in OrderStatus.values:
        raise ValidationFailed(field_errors={"status": [f"Must be one of {', '.join(OrderStatus.values)}."]})
    if source not in CancelSource.values:
        raise ValueError(f"unknown source {source!r}")
    with transaction.atomic():
        order = Order.objects.select_for_update().filter(call_id=call.pk, organization_id=call.organization_id).first()
        if order is None:
            raise NotFound("this call has no order")
        if order.status == status:
            return order, False
        if status not in ORDER_TRANSITIONS[order.status]:
            raise InvalidTransition(
                f"An order cannot go from {order.status} to {status}.",
                details={"from": order.status, "to": status,
                         "allowed": sorted(ORDER_TRANSITIONS[order.status])},
            )
        previous = order.status
        now = now or timezone.now()
        order.status = status
        fields = ["status", "updated_at"]
        if status == OrderStatus.CANCELED:
            order.canceled_at = now
            order.canceled_by = source
            fields += ["canceled_at", "canceled_by"]
        order.save(update_fields=fields)
        emit(
            org=call.organization,
            type="call_order.status_changed",
            data=events.order_status_changed_data(
                order=order, previous_status=previous, changed_at=now, changed_by=changed_by
            ),
        )
        return order, True


def order_cancel_by_caller(
    *, org: Organization, phone_number: str, call_order_number: int | None = None, now: datetime | None = None
) -> tuple[Order, bool]:
    """A caller phoned back to cancel: their latest order (or the numbered one) from that phone number.

    Allowed while the order allows cancellation and before its deadline; emits `canceled_by: caller_via_phone`.
    An order already canceled answers (order, False), so a retried request is harmless.
    """
    now = now or timezone.now()
    orders = Order.objects.for_org(org).filter(call__from_number=phone_number)
    if call_order_number is not None:
        orders = orders.filter(call_order_number=call_order_number)
    order = orders.select_related("call", "call__organization").order_by("-placed_at", "-call_order_number").first()
    if order is None:
        raise NotFound("no order from this number")
    if order.status == OrderStatus.CANCELED:
        return order, False
    if not order.cancellation_allowed or now > order.cancellation_deadline_at:
        raise CancellationWindowClosed(
            "This order can no longer be canceled by phone.",
            details={"cancellation_allowed": order.cancellation_allowed,
                     "cancellation_deadline_at": events.iso_ms(order.cancellation_deadline_at)},
        )
    return order_set_status(
        call=order.call, status=OrderStatus.CANCELED, changed_by=None, source=CancelSource.CALLER_VIA_PHONE, now=now
    )


# --- recordings --------------------------------------------------------------------------------------------


def recording_store(
    *,
    org: Organization,
    runtime_call_id: str,
    content: bytes,
    content_type: str,
    duration_seconds: int | None = None,
) -> tuple[Recording, bool]:
    """Stores the call's recording once: (recording, created). Emits `call.recording_ready`.

    Works before or after the call's completion (the spec: the recording often comes first). A second upload
    for the same call keeps the first and emits nothing. Refused when the org has call recording turned off.

    The file is written before the row and deleted again when this transaction fails (inserting, emitting or
    committing). Assumes this is the outermost transaction, as for the runtime's upload view: if an enclosing
    one rolled back after this returned, the file would stay behind.
    """
    if not org.call_recording_enabled:
        raise RecordingDisabled("Call recording is turned off for this organization.")
    stored_name = None
    try:
        with transaction.atomic():
            call = _locked_call(org=org, runtime_call_id=runtime_call_id)
            existing = Recording.objects.filter(call=call).first()
            if existing is not None:
                return existing, False
            recording = Recording(
                organization=org,
                call=call,
                content_type=content_type,
                size_bytes=len(content),
                duration_seconds=duration_seconds,
                uploaded_at=timezone.now(),
            )
            # Storage is not transactional: the file is written under the call's lock (so only one upload writes)
            # and deleted below if the transaction does not commit, so a rollback never leaves an orphan file.
            extension = CONTENT_TYPE_EXTENSIONS.get(content_type, "bin")
            recording.file.save(f"{call.pk}.{extension}", ContentFile(content), save=False)
            stored_name = recording.file.name
            recording.save(force_insert=True)
            emit(org=org, type="call.recording_ready", data=events.recording_ready_data(call, duration_seconds))
    except BaseException:
        if stored_name is not None:
            _delete_stored_file(recording.file.storage, stored_name)
        raise
    return recording, True


def _delete_stored_file(storage, name: str) -> None:
    try:
        storage.delete(name)
    except Exception:
        # The original failure is what the caller must see; a leftover file is only logged.
        logger.exception("Could not delete the recording file %s after a rollback", name)


# --- configuration the runtime reads -----------------------------------------------------------------------


@transaction.atomic
def escalation_rule_create(
    *,
    org: Organization,
    name: str,
    destination_type: str,
    destination_team_member=None,
    destination_phone: str | None = None,
    keywords: list[str] | None = None,
    description: str = "",
) -> EscalationRule:
    """Creates an escalation rule and bumps the org's knowledge version (the runtime's ETag changes)."""
    if destination_type == EscalationRule.DestinationType.TEAM_MEMBER and destination_team_member is None:
        raise ValidationFailed(field_errors={"destination_team_member": ["Required for a team_member rule."]})
    if destination_type == EscalationRule.DestinationType.PHONE and not destination_phone:
        raise ValidationFailed(field_errors={"destination_phone": ["Required for a phone rule."]})
    try:
        with transaction.atomic():
            rule = EscalationRule.objects.create(
                organization=org, name=name, destination_type=destination_type,
                destination_team_member=destination_team_member, destination_phone=destination_phone,
                keywords=list(keywords or []), description=description,
            )
    except IntegrityError:
        raise Conflict("name") from None
    knowledge_version_bump(org=org)
    return rule


@transaction.atomic
def calendar_create(*, org: Organization, name: str, timezone_name: str = "UTC", location=None) -> Calendar:
    """Creates a bookable calendar and bumps the org's knowledge version."""
    try:
        with transaction.atomic():
            calendar = Calendar.objects.create(organization=org, name=name, timezone=timezone_name, location=location)
    except IntegrityError:
        raise Conflict("name") from None
    knowledge_version_bump(org=org)
    return calendar


# --- the team's follow-up (the dashboard's inbox) ----------------------------------------------------------


def _mark_handled(model, *, org: Organization, item_id, by, now: datetime | None = None):
    """Marks one callback request, message or escalation of `org` handled by user `by`: (item, changed).

    Under the row's lock, so two people clicking at once record one handler (the first); already handled is a
    no-op. Another org's id is NotFound, the same as a missing one.
    """
    with transaction.atomic():
        item = model.objects.for_org(org).select_for_update().filter(pk=item_id).first()
        if item is None:
            raise NotFound(f"{model._meta.verbose_name} not found")
        if item.handled_at is not None:
            return item, False
        item.handled_at = now or timezone.now()
        item.handled_by = by
        item.save(update_fields=["handled_at", "handled_by", "updated_at"])
        return item, True


def callback_mark_handled(*, org: Organization, callback_id, by, now: datetime | None = None):
    """The team called the caller back: (callback, changed). No event (the spec has none for it)."""
    return _mark_handled(CallbackRequest, org=org, item_id=callback_id, by=by, now=now)


def message_mark_handled(*, org: Organization, message_id, by, now: datetime | None = None):
    """The message reached its team member: (message, changed). No event."""
    return _mark_handled(Message, org=org, item_id=message_id, by=by, now=now)


def escalation_mark_handled(*, org: Organization, escalation_id, by, now: datetime | None = None):
    """The escalation was followed up: (escalation, changed). No event."""
    return _mark_handled(Escalation, org=org, item_id=escalation_id, by=by, now=now)
