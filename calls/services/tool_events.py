"""Mid-call tool events: each recorded once per runtime event id, its label added to the call's trail, and what it
asks for done at once (a callback request, an escalation, a booking, a caller's cancellation), with its event."""

from django.db import IntegrityError, transaction
from django.db.models import F

from core.errors import NotFound, ValidationFailed
from knowledge.models import TeamMember
from notifications.services import notify_callback_requested, notify_escalation_triggered
from orgs.models import Organization
from webhooks.services import emit

from .. import payloads
from .. import redaction as redacting
from ..models import Booking, Calendar, Call, CallbackRequest, Escalation, EscalationRule, ToolEvent
from .bookings import booking_insert
from .lookups import locked_call, org_row, runtime_phone
from .orders import order_cancel_by_caller
from .recordings import recording_withhold

# The free texts of each tool event type, redacted before anything is stored (calls.redaction).
FREE_TEXT = {"callback_requested": ("reason", "custom_window"), "escalation_triggered": ("context",)}


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

    `callback_requested`, `escalation_triggered` and `appointment_booked` emit their events here, before the call is
    classified (docs/webhooks.md#event-types: they are never filtered). `order_cancel_requested` cancels the caller's
    order. `tool` only adds its label to the trail. A retried event id returns the first result and does nothing.
    """
    handler = TOOL_HANDLERS[type]
    data = dict(data or {})
    redactor = None
    if type in FREE_TEXT:
        redactor = redacting.redactor_for(org)
        data.update({name: redactor.text(data[name]) for name in FREE_TEXT[type] if name in data})
    with transaction.atomic():
        call = locked_call(org=org, runtime_call_id=runtime_call_id)
        try:
            with transaction.atomic():
                event = ToolEvent.objects.create(
                    organization=org, call=call, runtime_event_id=runtime_event_id, type=type,
                    label=label or "", offset_seconds=offset_seconds,
                )
        except IntegrityError:
            previous = ToolEvent.objects.get(call=call, runtime_event_id=runtime_event_id)
            return previous.result, False
        if redactor is not None and redactor.tally.heard:
            call.redaction = redacting.redaction_after(call, redactor, org=org)
            call.save(update_fields=["redaction", "updated_at"])
            if call.redaction["recording_withheld"]:
                recording_withhold(call=call)
        event.result = handler(call=call, data=data) if handler else {}
        event.save(update_fields=["result", "updated_at"])
        if event.label:
            _trail_refresh(call)
        return event.result, True


def _collapse(labels: list[str]) -> list[str]:
    trail: list[str] = []
    for label in labels:
        if label and (not trail or trail[-1] != label):
            trail.append(label)
    return trail


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
    member = org_row(TeamMember, org, data.get("requested_team_member_id"))
    callback = CallbackRequest.objects.create(
        organization=org,
        call=call,
        contact_id=call.contact_id,
        callback_number=runtime_phone(org, data.get("callback_number"), "data.callback_number") or call.from_number,
        requested_window=window,
        custom_window=data.get("custom_window") or None,
        reason=data.get("reason", ""),
        requested_team_member=member,
    )
    emit(org=org, type="call.callback_requested", data=payloads.callback_requested_data(callback, call),
         location_id=call.location_id)
    notify_callback_requested(callback=callback, call=call)  # at once (docs/webhooks.md#event-types)
    return {"callback_request_id": str(callback.pk)}


def escalation_create(*, call: Call, data: dict) -> dict:
    """An escalation rule matched and the caller was routed to a human; emits `call.escalation_triggered`."""
    org = call.organization
    rule = org_row(EscalationRule, org, data.get("rule_id"))
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
    emit(org=org, type="call.escalation_triggered", data=payloads.escalation_triggered_data(escalation, call),
         location_id=call.location_id)
    notify_escalation_triggered(escalation=escalation, call=call)
    return {"escalation_id": str(escalation.pk)}


def booking_create(*, call: Call, data: dict) -> dict:
    """An appointment booked and confirmed on the call; emits `call.appointment_booked`. A time outside the
    calendar's weekly hours or taken by a confirmed booking is 409 `slot_unavailable` (bookings.booking_insert).

    Contact details are best effort: what the caller confirmed on this call wins, then the contact record.
    """
    org = call.organization
    calendar = org_row(Calendar, org, data.get("calendar_id"))
    if calendar is None:
        raise ValidationFailed(field_errors={"data.calendar_id": ["This field is required."]})
    if data["end_at"] <= data["start_at"]:
        raise ValidationFailed(field_errors={"data.end_at": ["end_at must be after start_at."]})
    contact = call.contact
    booking = booking_insert(Booking(
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
        contact_phone=runtime_phone(org, data.get("contact_phone"), "data.contact_phone") or call.from_number,
    ))
    emit(org=org, type="call.appointment_booked", data=payloads.appointment_booked_data(booking),
         location_id=booking.location_id)
    return {"booking_id": str(booking.pk)}


def _order_cancel_from_call(*, call: Call, data: dict) -> dict:
    """The caller asked to cancel their order: the one from this call's number (order_cancel_by_caller)."""
    if not call.from_number:
        raise NotFound("no order for a withheld number")
    order, _ = order_cancel_by_caller(
        org=call.organization, phone_number=call.from_number, call_order_number=data.get("call_order_number")
    )
    return {"call_id": str(order.call_id), "call_order_number": order.call_order_number, "order_status": order.status}


# What each tool event type does beyond the trail (`tool` does nothing more).
TOOL_HANDLERS = {
    "tool": None,
    "callback_requested": callback_request_create,
    "escalation_triggered": escalation_create,
    "appointment_booked": booking_create,
    "order_cancel_requested": _order_cancel_from_call,
}
