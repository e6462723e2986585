"""The calls domain's output shapes, built from rows: the `data` of every calls-side event (exactly their schemas'
fields, null where unknown: docs/webhooks.md#event-types) and the call and order bodies that the public API and the
agent runtime both answer with, so an event and an endpoint never disagree on a field.

Pure functions (no queries beyond the relations they are handed). The public API's serializers declare the same
shapes for the OpenAPI schema and render through these; tests pin that both agree.
"""


import functools

from core.links import call_url
from core.sqljson import column, model_item, reverse_one_to_one
from core.timefmt import iso_ms

from .models import Booking, Call, CallbackRequest, Escalation, Message, Order, Recording
from .selectors import call_order, call_recording

# call.appointment_booked's `source`: a constant naming the voice agent (docs/webhooks.md#event-types).
BOOKING_SOURCE = "voice_agent"
CONTACT_SOURCE = "inbound_call"


def _id(value) -> str | None:
    return str(value) if value is not None else None


def order_data(order: Order) -> dict:
    """The `order` object of docs/api.md#orders (without `order_status`, which sits beside it in `call.ended`)."""
    return {
        "call_order_number": order.call_order_number,
        "profile_id": str(order.profile_id),
        "profile_name": order.profile_name,
        "items": order.items,
        "order_answers": order.order_answers,
        "subtotal_cents": order.subtotal_cents,
        "total_cents": order.total_cents,
        "fulfillment_estimate_value": order.fulfillment_estimate_value,
        "fulfillment_estimate_unit": order.fulfillment_estimate_unit,
        "fulfillment_estimate_label": order.fulfillment_estimate_label,
        "fulfillment_varies": order.fulfillment_varies,
        "expected_fulfillment_at": iso_ms(order.expected_fulfillment_at),
        "cancellation_allowed": order.cancellation_allowed,
        "cancellation_window_value": order.cancellation_window_value,
        "cancellation_window_unit": order.cancellation_window_unit,
        "cancellation_deadline_at": iso_ms(order.cancellation_deadline_at),
        "placed_at": iso_ms(order.placed_at),
        "canceled_at": iso_ms(order.canceled_at),
        "canceled_by": order.canceled_by,
        "payment_status": order.payment_status,
        "external_order_id": order.external_order_id,
        "payment_collected_at": iso_ms(order.payment_collected_at),
    }


def order_detail_data(order: Order) -> dict:
    """The API's order: the `call.ended` order object plus `order_status` (and `call_id`, for the order-status
    response)."""
    return {"call_id": str(order.call_id), "order_status": order.status, **order_data(order)}


def _call_span(call: Call) -> dict:
    """The fields the call list item and `call.ended` both carry, in the order both show them."""
    return {
        "started_at": iso_ms(call.started_at),
        "ended_at": iso_ms(call.ended_at),
        "duration_seconds": call.duration_seconds,
        "direction": call.direction,
        "from_number": call.from_number,
        "disposition": call.disposition,
    }


def redaction_data(call: Call) -> dict:
    """What the detector replaced in the call's text (docs/privacy.md#redaction): its version (null: stored before
    redaction and not yet redacted by `manage.py redact_stored_calls`), detections per kind, and whether the
    recording was withheld."""
    redaction = call.redaction or {}
    return {
        "detector_version": redaction.get("detector_version"),
        "counts": dict(redaction.get("counts") or {}),
        "recording_withheld": bool(redaction.get("recording_withheld")),
    }


def call_data(call: Call) -> dict:
    """A call as `GET /v1/calls` lists it. Built directly: a page is up to 100 of these, and DRF's per-field
    machinery costs ~0.15 ms a call."""
    order = call_order(call)
    return {
        "id": str(call.id),
        "location_id": _id(call.location_id),
        "contact_id": _id(call.contact_id),
        **_call_span(call),
        "classification": call.classification,
        "scorable": call.scorable,
        "score": call.score,
        "summary": call.summary,
        "outcome": call.outcome,
        "outcome_tags": list(call.outcome_tags),
        "trail": list(call.trail),
        "has_recording": call_recording(call) is not None,
        "order_status": order.status if order is not None else None,
        "status": call.status,
        "redaction": redaction_data(call),
        "content_deleted_at": iso_ms(call.content_deleted_at),
        "content_deleted_reason": call.content_deleted_reason,
    }


# redaction_data in SQL: the three keys whatever the stored object holds.
_REDACTION_SQL = (
    "json_build_object('detector_version', {column} ->> 'detector_version', "
    "'counts', COALESCE({column} -> 'counts', '{{}}'::jsonb), "
    "'recording_withheld', COALESCE(({column} ->> 'recording_withheld')::boolean, false))"
)


@functools.cache
def call_data_sql():
    """`call_data` built by PostgreSQL, for a list page (core/sqljson.py); pinned to `call_data` by
    tests/api/test_list_items_sql.py."""
    return model_item(
        Call,
        ["id", "location_id", "contact_id", "started_at", "ended_at", "duration_seconds", "direction", "from_number",
         "disposition", "classification", "scorable", "score", "summary", "outcome", "outcome_tags", "trail",
         "has_recording", "order_status", "status", "redaction", "content_deleted_at", "content_deleted_reason"],
        has_recording=reverse_one_to_one(Call, Recording),
        order_status=reverse_one_to_one(Call, Order, "status"),
        redaction=_REDACTION_SQL.format(column=column(Call, "redaction")),
    )


def _transcript_turn(turn: dict) -> dict:
    return {"speaker": turn["speaker"], "text": str(turn["text"]), "offset_seconds": float(turn["offset_seconds"])}


def _quality_check(check: dict) -> dict:
    return {
        "name": str(check["name"]),
        "verdict": check["verdict"],
        "evidence": [str(quote) for quote in check["evidence"]],
        "gap_type": _id(check.get("gap_type")),
        "verification": check["verification"],
    }


def fields_data(call: Call) -> dict:
    """The call's call fields as stored at completion: `{name: {label, type, value, evidence, evidence_verified}}`."""
    keys = ("label", "type", "value", "evidence", "evidence_verified")
    return {name: {key: entry.get(key) for key in keys} for name, entry in sorted((call.fields or {}).items())}


def call_detail_data(call: Call) -> dict:
    """A call as `GET /v1/calls/{id}` shows it (and the runtime's completion answers): the list item plus the
    transcript, the quality checks, when the outcome is `order` the order, and what the agent knew (the knowledge
    version it answered from, the facts it relied on as they were then, what it could not answer)."""
    order = call_order(call)
    return {
        **call_data(call),
        "transcript": [_transcript_turn(turn) for turn in call.transcript],
        "quality_checks": [_quality_check(check) for check in call.quality_checks],
        "order": order_detail_data(order) if call.outcome == "order" and order is not None else None,
        "knowledge_version": call.knowledge_version,
        "facts_used": [{"id": fact["id"], "label": fact["label"]} for fact in call.facts_used],
        # A deleted call's questions are nulls, kept for their number (calls.services.content): none is shown.
        "unanswered_questions": [question for question in call.unanswered_questions if question is not None],
        "fields": fields_data(call),
    }


def call_ended_data(call: Call, order: Order | None) -> dict:
    data = {
        "call_id": str(call.pk),
        "location_id": _id(call.location_id),
        **_call_span(call),
        "summary": call.summary or "",
        "outcome_tags": list(call.outcome_tags),
        "contact_id": _id(call.contact_id),
        "call_url": call_url(call.pk),
        "trail": list(call.trail),
        "outcome": call.outcome or "",
        "fields": fields_data(call),
        "redaction": redaction_data(call),
    }
    if call.outcome == "order" and order is not None:
        # At call.ended the order is as first placed: status `new` (docs/webhooks.md#event-types).
        data["order_status"] = order.status
        data["order"] = order_data(order)
    return data


def recording_ready_data(call: Call, duration_seconds: int | None) -> dict:
    return {
        "call_id": str(call.pk),
        "location_id": _id(call.location_id),
        "duration_seconds": duration_seconds,
        "recording_available": True,
    }


def order_status_changed_data(
    *, order: Order, previous_status: str | None, changed_at, changed_by: str | None
) -> dict:
    return {
        "call_id": str(order.call_id),
        "call_order_number": order.call_order_number,
        "previous_status": previous_status,
        "new_status": order.status,
        "changed_at": iso_ms(changed_at),
        "changed_by": changed_by,
        "canceled_by": order.canceled_by if order.status == "canceled" else None,
    }


def callback_requested_data(callback: CallbackRequest, call: Call) -> dict:
    return {
        "call_id": str(call.pk),
        "location_id": _id(call.location_id),
        "contact_id": _id(callback.contact_id),
        "callback_number": callback.callback_number,
        "requested_window": callback.requested_window,
        "custom_window": callback.custom_window,
        "reason": callback.reason,
        "requested_team_member_id": _id(callback.requested_team_member_id),
    }


def message_taken_data(message: Message, call: Call) -> dict:
    return {
        "call_id": str(call.pk),
        "location_id": _id(call.location_id),
        "contact_id": _id(call.contact_id),
        "for_team_member_id": _id(message.for_team_member_id),
        "for_team_member_name": message.for_team_member_name,
        "message": message.message,
        "caller_name": message.caller_name,
        "callback_number": message.callback_number,
    }


def escalation_triggered_data(escalation: Escalation, call: Call) -> dict:
    return {
        "call_id": str(call.pk),
        "location_id": _id(call.location_id),
        "rule_id": _id(escalation.rule_id),  # null once the rule is deleted (the name stays)
        "rule_name": escalation.rule_name,
        "destination_type": escalation.destination_type,
        "destination_id": _id(escalation.destination_team_member_id),
        "destination_phone": escalation.destination_phone,
        "triggered_by": escalation.triggered_by,
        "context": escalation.context,
    }


def appointment_booked_data(booking: Booking) -> dict:
    return {
        "booking_id": str(booking.pk),
        "call_id": _id(booking.call_id),
        "calendar_id": str(booking.calendar_id),
        # Reserved and always null (docs/webhooks.md#event-types).
        "service_id": None,
        "service_name": None,
        "team_member_id": None,
        "location_id": _id(booking.location_id),
        "start_at": iso_ms(booking.start_at),
        "end_at": iso_ms(booking.end_at),
        "timezone": booking.timezone,
        "contact_id": _id(booking.contact_id),
        "contact_name": booking.contact_name,
        "contact_email": booking.contact_email,
        "contact_phone": booking.contact_phone,
        "source": BOOKING_SOURCE,
    }


def contact_created_data(contact, call: Call) -> dict:
    return {
        "contact_id": str(contact.pk),
        "phone": contact.phone_number,
        "name": contact.name,
        "email": contact.email,
        "first_call_id": str(call.pk),
        "first_call_at": iso_ms(call.ended_at),
        "source": CONTACT_SOURCE,
    }
