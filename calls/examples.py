"""Realistic examples of the calls-side events for test deliveries, built by the same payload builders as real
events from rows that are never saved (webhooks.catalog asks for them by type; registered in CallsConfig.ready)."""

import uuid
from datetime import timedelta

from django.utils import timezone

from contacts.models import Contact
from core.sensitive import DETECTOR_VERSION

from . import payloads
from .models import Booking, Call, CallbackRequest, Escalation, Message, Order

CALLER = "+14155550123"


def _ms(value):
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def _call(org, *, outcome="order") -> Call:
    ended = _ms(timezone.now())
    return Call(
        id=uuid.uuid4(), organization=org, runtime_call_id="example", status=Call.Status.COMPLETED,
        location_id=uuid.uuid4(), contact_id=uuid.uuid4(), started_at=ended - timedelta(seconds=184), ended_at=ended,
        duration_seconds=184, direction=Call.Direction.INBOUND, from_number=CALLER,
        disposition=Call.Disposition.COMPLETED, scorable=True,
        summary="The caller ordered two margherita pizzas for pickup and asked about parking.", outcome=outcome,
        outcome_tags=["pickup"], trail=["greeting", "order", "confirmation"],
        fields={"pizza_count": {"label": "Pizzas", "type": "number", "value": 2, "evidence": "two margheritas",
                                "evidence_verified": True}},
        redaction={"detector_version": DETECTOR_VERSION, "counts": {"card_number": 1}, "recording_withheld": True},
    )


def _order(call: Call) -> Order:
    placed = call.ended_at
    line = {"catalog_item_id": str(uuid.uuid4()), "name": "Margherita pizza", "quantity": 2, "modifiers": [],
            "answers": [], "unit_price_cents": 1250, "line_total_cents": 2500}
    return Order(
        id=uuid.uuid4(), organization=call.organization, call=call, call_order_number=1042, profile_id=uuid.uuid4(),
        profile_name="Pickup", items=[line], order_answers=[], subtotal_cents=2500, total_cents=2500,
        fulfillment_estimate_value=20, fulfillment_estimate_unit="minutes", fulfillment_estimate_label=None,
        fulfillment_varies=False, expected_fulfillment_at=placed + timedelta(minutes=20), cancellation_allowed=True,
        cancellation_window_value=5, cancellation_window_unit="minutes",
        cancellation_deadline_at=placed + timedelta(minutes=5), placed_at=placed,
    )


def call_ended(org) -> dict:
    call = _call(org)
    return payloads.call_ended_data(call, _order(call))


def recording_ready(org) -> dict:
    return payloads.recording_ready_data(_call(org), 184)


def order_status_changed(org) -> dict:
    order = _order(_call(org))
    order.status = "in_progress"
    return payloads.order_status_changed_data(
        order=order, previous_status="new", changed_at=_ms(timezone.now()), changed_by="Maria Lopez"
    )


def callback_requested(org) -> dict:
    call = _call(org, outcome="callback")
    callback = CallbackRequest(
        organization=org, call=call, contact_id=call.contact_id, callback_number=CALLER,
        requested_window=CallbackRequest.Window.AFTERNOON, reason="Wants to book a table for a party of twelve.",
    )
    return payloads.callback_requested_data(callback, call)


def message_taken(org) -> dict:
    call = _call(org, outcome="message")
    message = Message(
        organization=org, call=call, for_team_member_id=uuid.uuid4(), for_team_member_name="Maria Lopez",
        message="Please call back about the catering order for Friday.", caller_name="Sam Rivera",
        callback_number=CALLER,
    )
    return payloads.message_taken_data(message, call)


def escalation_triggered(org) -> dict:
    call = _call(org, outcome="escalation")
    escalation = Escalation(
        organization=org, call=call, rule_id=uuid.uuid4(), rule_name="Allergy questions",
        destination_type="team_member", destination_team_member_id=uuid.uuid4(), destination_phone=None,
        triggered_by="keyword", context="Caller asked whether the pesto contains nuts.",
    )
    return payloads.escalation_triggered_data(escalation, call)


def appointment_booked(org) -> dict:
    call = _call(org, outcome="booking")
    start = _ms(timezone.now()).replace(second=0, microsecond=0) + timedelta(days=2)
    booking = Booking(
        id=uuid.uuid4(), organization=org, calendar_id=uuid.uuid4(), call=call, location_id=call.location_id,
        contact_id=call.contact_id, start_at=start, end_at=start + timedelta(minutes=30), timezone="America/New_York",
        contact_name="Sam Rivera", contact_email="sam@example.com", contact_phone=CALLER,
    )
    return payloads.appointment_booked_data(booking)


def contact_created(org) -> dict:
    call = _call(org)
    contact = Contact(id=call.contact_id, organization=org, phone_number=CALLER, name="Sam Rivera",
                      email="sam@example.com")
    return payloads.contact_created_data(contact, call)


def content_deleted(org) -> dict:
    call = _call(org)
    return {"call_id": str(call.pk), "location_id": str(call.location_id), "parts": ["transcript", "recording"],
            "reason": "retention"}


BUILDERS = {
    "call.ended": call_ended,
    "call.recording_ready": recording_ready,
    "call_order.status_changed": order_status_changed,
    "call.callback_requested": callback_requested,
    "call.message_taken": message_taken,
    "call.escalation_triggered": escalation_triggered,
    "call.appointment_booked": appointment_booked,
    "contact.created": contact_created,
    "call.content_deleted": content_deleted,
}
