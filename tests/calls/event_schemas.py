"""JSON Schemas of the calls-side events' `data`, written from the spec's tables (Events, Event types).

Every field of a table is required (the spec: null where unknown, never missing) and nothing else is allowed.
`call.ended` carries `order_status` and `order` if and only if `outcome` is `order`.
"""

UUID = {"type": "string", "pattern": r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"}
TIMESTAMP = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$"}
PHONE = {"type": "string", "pattern": r"^\+[1-9]\d{6,14}$"}
EMAIL = {"type": "string", "pattern": r"^[^@\s]+@[^@\s]+\.[^@\s]+$"}
ORDER_STATUS = ["new", "in_progress", "fulfilled", "canceled"]
CANCEL_SOURCES = ["team_via_dashboard", "team_via_api", "caller_via_phone"]


def nullable(schema: dict) -> dict:
    return {"anyOf": [schema, {"type": "null"}]}


def strict(properties: dict, required: list[str] | None = None) -> dict:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        "additionalProperties": False,
    }


ANSWER = strict({"question_id": UUID, "prompt": {"type": "string"}, "answer": {"type": "string"}})
MODIFIER = strict({
    "group_id": UUID, "group_name": {"type": "string"}, "option_name": {"type": "string"},
    "price_cents": {"type": "integer"},
})
ITEM = strict({
    "catalog_item_id": UUID,
    "name": {"type": "string"},
    "quantity": {"type": "integer"},
    "modifiers": {"type": "array", "items": MODIFIER},
    "answers": {"type": "array", "items": ANSWER},
    "unit_price_cents": {"type": "integer"},
    "line_total_cents": {"type": "integer"},
})
ORDER = strict({
    "call_order_number": {"type": "integer"},
    "profile_id": UUID,
    "profile_name": {"type": "string"},
    "items": {"type": "array", "items": ITEM},
    "order_answers": {"type": "array", "items": ANSWER},
    "subtotal_cents": {"type": "integer"},
    "total_cents": {"type": "integer"},
    "fulfillment_estimate_value": {"type": "number"},
    "fulfillment_estimate_unit": {"type": "string"},
    "fulfillment_estimate_label": nullable({"type": "string"}),
    "fulfillment_varies": {"type": "boolean"},
    "expected_fulfillment_at": TIMESTAMP,
    "cancellation_allowed": {"type": "boolean"},
    "cancellation_window_value": {"type": "number"},
    "cancellation_window_unit": {"type": "string"},
    "cancellation_deadline_at": TIMESTAMP,
    "placed_at": TIMESTAMP,
    "canceled_at": nullable(TIMESTAMP),
    "canceled_by": nullable({"enum": CANCEL_SOURCES}),
    "payment_status": nullable({"type": "string"}),
    "external_order_id": nullable({"type": "string"}),
    "payment_collected_at": nullable(TIMESTAMP),
})

_CALL_ENDED_BASE = {
    "call_id": UUID,
    "location_id": nullable(UUID),
    "started_at": TIMESTAMP,
    "ended_at": TIMESTAMP,
    "duration_seconds": {"type": "integer", "minimum": 0},
    "direction": {"type": "string"},
    "from_number": nullable(PHONE),
    "disposition": {"enum": ["completed", "transferred", "escalated"]},
    "summary": {"type": "string"},
    "outcome_tags": {"type": "array", "items": {"type": "string"}},
    "contact_id": nullable(UUID),
    "call_url": {"type": "string", "pattern": r"^https?://[^\s]+/calls/[0-9a-f-]{36}$"},
    "trail": {"type": "array", "items": {"type": "string"}},
    "outcome": {"type": "string"},
}
CALL_ENDED = {
    **strict({**_CALL_ENDED_BASE, "order_status": {"const": "new"}, "order": ORDER}, required=list(_CALL_ENDED_BASE)),
    "if": {"properties": {"outcome": {"const": "order"}}, "required": ["outcome"]},
    "then": {"required": ["order_status", "order"]},
    "else": {"not": {"anyOf": [{"required": ["order_status"]}, {"required": ["order"]}]}},
}

SCHEMAS = {
    "call.ended": CALL_ENDED,
    "call.recording_ready": strict({
        "call_id": UUID,
        "location_id": nullable(UUID),
        "duration_seconds": nullable({"type": "integer", "minimum": 0}),
        "recording_available": {"type": "boolean"},
    }),
    "call_order.status_changed": strict({
        "call_id": UUID,
        "call_order_number": {"type": "integer"},
        "previous_status": nullable({"enum": ORDER_STATUS}),
        "new_status": {"enum": ORDER_STATUS},
        "changed_at": TIMESTAMP,
        "changed_by": nullable({"type": "string"}),
        "canceled_by": nullable({"enum": CANCEL_SOURCES}),
    }),
    "call.callback_requested": strict({
        "call_id": UUID,
        "location_id": nullable(UUID),
        "contact_id": nullable(UUID),
        "callback_number": nullable(PHONE),
        "requested_window": {"enum": ["asap", "morning", "afternoon", "evening", "custom"]},
        "custom_window": nullable({"type": "string"}),
        "reason": {"type": "string"},
        "requested_team_member_id": nullable(UUID),
    }),
    "call.message_taken": strict({
        "call_id": UUID,
        "location_id": nullable(UUID),
        "contact_id": nullable(UUID),
        "for_team_member_id": nullable(UUID),
        "for_team_member_name": nullable({"type": "string"}),
        "message": {"type": "string"},
        "caller_name": nullable({"type": "string"}),
        "callback_number": nullable(PHONE),
    }),
    "call.escalation_triggered": strict({
        "call_id": UUID,
        "location_id": nullable(UUID),
        "rule_id": UUID,
        "rule_name": {"type": "string"},
        "destination_type": {"enum": ["team_member", "phone"]},
        "destination_id": nullable(UUID),
        "destination_phone": nullable(PHONE),
        "triggered_by": {"enum": ["keyword", "llm_classification"]},
        "context": {"type": "string"},
    }),
    "call.appointment_booked": strict({
        "booking_id": UUID,
        "call_id": UUID,
        "calendar_id": UUID,
        "service_id": {"type": "null"},
        "service_name": {"type": "null"},
        "team_member_id": {"type": "null"},
        "location_id": nullable(UUID),
        "start_at": TIMESTAMP,
        "end_at": TIMESTAMP,
        "timezone": {"type": "string", "minLength": 1},
        "contact_id": nullable(UUID),
        "contact_name": nullable({"type": "string"}),
        "contact_email": nullable(EMAIL),
        "contact_phone": nullable(PHONE),
        "source": {"type": "string", "minLength": 1},
    }),
    "contact.created": strict({
        "contact_id": UUID,
        "phone": nullable(PHONE),
        "name": nullable({"type": "string"}),
        "email": nullable(EMAIL),
        "first_call_id": UUID,
        "first_call_at": TIMESTAMP,
        "source": {"type": "string"},
    }),
}
