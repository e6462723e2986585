"""The event catalog: every event type (the spec's nine, the alerts', the operational ones), what each means, and the
JSON Schema (2020-12) of each envelope.

The one source of the payload contract: `GET /v1/event-types` serves it, the OpenAPI document's `webhooks` section
is built from it, and the test suite validates every event it makes against what the API serves. Every field of a
type is required (null where unknown, never missing) and nothing else is allowed (docs/webhooks.md#event-types).
`call.ended` carries `order_status` and `order` if and only if `outcome` is `order`.

Example payloads for test deliveries come from the apps that own the builders (calls, meetings): they register an
example builder here from their `ready()`, so this low-ranked app never imports them.
"""

import uuid
from collections.abc import Callable
from datetime import timedelta

from django.utils import timezone

from core.timefmt import iso_ms

from .models import API_VERSION, EVENT_TYPES

DIALECT = "https://json-schema.org/draft/2020-12/schema"

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

# The organization's call fields as the call stored them (docs/api.md#call-fields), keyed by the field's name then.
CALL_FIELD_VALUE = strict({
    "label": {"type": "string"},
    "type": {"enum": ["string", "number", "boolean", "date", "enum"]},
    "value": {"type": ["string", "number", "boolean"]},
    "evidence": nullable({"type": "string"}),
    "evidence_verified": {"type": "boolean"},
})
CALL_FIELDS = {"type": "object", "propertyNames": {"pattern": r"^[a-z][a-z0-9_]{0,63}$"},
               "additionalProperties": CALL_FIELD_VALUE}

# What the detector replaced in the call's text before it was stored (docs/privacy.md#redaction).
REDACTION_KINDS = ["card_number", "government_id", "bank_account", "email", "phone_number", "date_of_birth"]
REDACTION = strict({
    "detector_version": nullable({"type": "string"}),
    "counts": {"type": "object", "propertyNames": {"enum": REDACTION_KINDS},
               "additionalProperties": {"type": "integer", "minimum": 1}},
    "recording_withheld": {"type": "boolean"},
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
    "fields": CALL_FIELDS,
    "redaction": REDACTION,
}
CALL_ENDED = {
    **strict({**_CALL_ENDED_BASE, "order_status": {"const": "new"}, "order": ORDER}, required=list(_CALL_ENDED_BASE)),
    "if": {"properties": {"outcome": {"const": "order"}}, "required": ["outcome"]},
    "then": {"required": ["order_status", "order"]},
    "else": {"not": {"anyOf": [{"required": ["order_status"]}, {"required": ["order"]}]}},
}

DATA_SCHEMAS = {
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
        "rule_id": nullable(UUID),  # null only in a follow-up read after the rule was deleted
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

_STRINGS = {"type": "array", "items": {"type": "string"}}
DATE_MS = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"}

DATA_SCHEMAS["meeting.outcome_approved"] = strict({
    "meeting_id": UUID,
    "outcome_id": UUID,
    "dispatch_id": UUID,
    "title": nullable({"type": "string"}),
    "approved_at": DATE_MS,
    "summary": {"type": "string"},
    "tickets": {
        "type": "array",
        "items": strict({
            "title": {"type": "string"},
            "description": {"type": "string"},
            "acceptance_criteria": _STRINGS,
            "file_refs": {"type": "array", "items": strict({"repo": {"type": "string"}, "path": {"type": "string"}})},
            "confidence": {"type": "number"},
            "assumptions": _STRINGS,
            "provenance": {"type": "string"},
        }),
    },
    "decisions": {"type": "array", "items": strict({"decision": {"type": "string"}, "context": {"type": "string"}})},
    "open_questions": {
        "type": "array", "items": strict({"question": {"type": "string"}, "context": {"type": "string"}}),
    },
    "action_items": {
        "type": "array",
        "items": strict({"who": {"type": "string"}, "what": {"type": "string"}, "due": nullable({"type": "string"})}),
    },
    "schema_version": {"type": "integer"},
    "meeting_url": {"type": "string", "format": "uri"},
    "status_url": {"type": "string", "format": "uri"},
})

CONTENT_PARTS = ["transcript", "recording"]
CONTENT_DELETED_REASONS = ["retention", "request", "erasure"]
DATA_SCHEMAS["call.content_deleted"] = strict({
    "call_id": UUID,
    "location_id": nullable(UUID),
    "parts": {"type": "array", "items": {"enum": CONTENT_PARTS}, "minItems": 1, "uniqueItems": True},
    "reason": {"enum": CONTENT_DELETED_REASONS},
})
DATA_SCHEMAS["contact.erased"] = strict({
    "erasure_request_id": UUID,
    "contact_id": nullable(UUID),
    "call_ids": {"type": "array", "items": UUID},
})

_ALERT = strict({
    "alert_id": UUID,
    "rule_id": nullable(UUID),
    "rule_name": {"type": "string"},
    "location_id": nullable(UUID),
    "metric": {"enum": ["calls", "abandoned_calls", "callbacks_waiting", "escalations_waiting",
                        "unanswered_question_rate", "webhook_failure_rate", "line_silent"]},
    "comparator": {"enum": ["gt", "lt"]},
    "value": {"type": "number"},
    "threshold": {"type": "number"},
    "window_minutes": {"type": "integer", "minimum": 15, "maximum": 1440},
    "triggered_at": TIMESTAMP,
    "resolved_at": nullable(TIMESTAMP),
    "alert_url": {"type": "string", "format": "uri"},
})
DATA_SCHEMAS["alert.triggered"] = _ALERT
DATA_SCHEMAS["alert.resolved"] = _ALERT
DATA_SCHEMAS["location.line_silent"] = strict({
    "alert_id": UUID,
    "rule_id": nullable(UUID),
    "location_id": UUID,
    "expected_calls": {"type": "number", "minimum": 0},
    "window_minutes": {"type": "integer", "minimum": 15, "maximum": 1440},
    "silent_since": TIMESTAMP,
})
_SUBSCRIPTION_ID = {"type": "string", "minLength": 1}
DATA_SCHEMAS["webhook_subscription.failing"] = strict({
    "subscription_id": _SUBSCRIPTION_ID,
    "url": {"type": "string"},
    "consecutive_failures": {"type": "integer", "minimum": 1},
    "failing_since": nullable(TIMESTAMP),
    "last_status_code": nullable({"type": "integer"}),
    "last_error": {"type": "string"},
})
DATA_SCHEMAS["webhook_subscription.disabled"] = strict({
    "subscription_id": _SUBSCRIPTION_ID,
    "url": {"type": "string"},
    "reason": {"type": "string"},
    "disabled_at": TIMESTAMP,
})
DATA_SCHEMAS["webhook_subscription.recovered"] = strict({
    "subscription_id": _SUBSCRIPTION_ID,
    "url": {"type": "string"},
    "failing_since": nullable(TIMESTAMP),
    "recovered_at": TIMESTAMP,
})

DESCRIPTIONS = {
    "call.ended": "A call finished and was classified as scorable. Carries the summary, the outcome, the "
    "organization's call fields as heard (`fields`), what was redacted from its text (`redaction`) and, for an "
    "`order` outcome, the order with its status.",
    "call.recording_ready": "A call's recording can be fetched (GET /v1/calls/{id}/recording).",
    "call_order.status_changed": "An order placed during a call moved to another status (by the team, the API or "
    "the caller).",
    "call.callback_requested": "A caller asked to be called back.",
    "call.message_taken": "The agent took a message for the team or a team member.",
    "call.escalation_triggered": "An escalation rule fired during a call (by keyword or by the classifier).",
    "call.appointment_booked": "The agent booked an appointment on one of the org's calendars.",
    "contact.created": "A caller not seen before became a contact.",
    "meeting.outcome_approved": "An admin approved a meeting's outcome and sent it (the meetings product).",
    "call.content_deleted": "A call's content (`transcript`: its transcript, summary and every text that quoted the "
    "caller; `recording`: its audio) was deleted, by the retention policy, on request or by an erasure. Delete your "
    "copies. Sent to every subscription that receives call events.",
    "contact.erased": "A caller was erased on their request (GDPR, CCPA): delete the contact and these calls in your "
    "systems. Ids only. Sent to every subscription that receives call or contact events.",
    "alert.triggered": "An alert rule's condition held: an alert opened (docs/api.md#alerts).",
    "alert.resolved": "An alert's metric was back within its rule's threshold for one whole window.",
    "location.line_silent": "The line watchdog: a location expected calls in the window (from the same weekday and "
    "hour of the last four weeks, while open) and none came.",
    "webhook_subscription.failing": "Another subscription of the organization failed its fourth consecutive attempt. "
    "Never sent to the failing endpoint itself.",
    "webhook_subscription.disabled": "Another subscription of the organization was disabled automatically, with the "
    "reason. Never sent to that endpoint itself.",
    "webhook_subscription.recovered": "A subscription that was failing answered 2xx again.",
}

# Who receives the privacy events besides the subscriptions that list them: every subscription that got what they
# tell it to delete (docs/privacy.md). `contact.erased` goes to such subscriptions whatever their locations: a
# caller is the whole organization's.
_CALL_TYPES = ("call.ended", "call.recording_ready", "call_order.status_changed", "call.callback_requested",
               "call.message_taken", "call.escalation_triggered", "call.appointment_booked")
AUDIENCE = {
    "call.content_deleted": _CALL_TYPES,
    "contact.erased": (*_CALL_TYPES, "contact.created"),
}
EVERY_LOCATION = frozenset({"contact.erased"})
# Events that are the tombstones' own: never rewritten into one.
PRIVACY_EVENTS = frozenset({"call.content_deleted", "contact.erased"})

# The data field that names the call an event is about, for the event types that are about one.
CALL_ID_FIELDS = {
    "call.ended": "call_id",
    "call.recording_ready": "call_id",
    "call_order.status_changed": "call_id",
    "call.callback_requested": "call_id",
    "call.message_taken": "call_id",
    "call.escalation_triggered": "call_id",
    "call.appointment_booked": "call_id",
    "contact.created": "first_call_id",
    "call.content_deleted": "call_id",
}

# Every event about a call carries `sequence` (1, 2, 3 ... per call in emit order: webhooks.services.emit), so a
# receiver can drop a stale update without needing ordered delivery (docs/webhooks.md#sequence).
SEQUENCE = {"type": "integer", "minimum": 1}
for _type in CALL_ID_FIELDS:
    _schema = DATA_SCHEMAS[_type]
    _schema["properties"]["sequence"] = SEQUENCE
    _schema["required"] = [*_schema["required"], "sequence"]

# Credentials an event carries for its receivers alone: (data field holding a URL, the URL's query parameter). The
# event log (`GET /v1/events`, the Events page) shows them redacted (webhooks.feed), so a read-only key or a member
# never learns one: a dispatch's status token can move the dispatch (meetings/README.md#progress).
RECEIVER_ONLY = {
    "meeting.outcome_approved": (("status_url", "token"),),
}
REDACTED = "redacted"


def envelope_schema(event_type: str) -> dict:
    """The complete schema of one event type's envelope, exactly as delivered."""
    return {
        "$schema": DIALECT,
        "title": event_type,
        "description": DESCRIPTIONS[event_type],
        "type": "object",
        "properties": {
            # Test deliveries (POST .../test) are `evt_test_...`: a receiver validating with this schema accepts them.
            "id": {"type": "string", "pattern": "^evt_(test_)?[0-9a-f]{32}$"},
            "type": {"const": event_type},
            "created_at": TIMESTAMP,
            "api_version": {"const": API_VERSION},
            "data": DATA_SCHEMAS[event_type],
        },
        "required": ["id", "type", "created_at", "api_version", "data"],
        "additionalProperties": False,
    }


def catalog() -> list[dict]:
    """`GET /v1/event-types`: the types in EVENT_TYPES order (docs/webhooks.md#event-types' nine, the privacy ones,
    the operational ones), each with its description and envelope schema."""
    return [{"type": t, "description": DESCRIPTIONS[t], "schema": envelope_schema(t)} for t in EVENT_TYPES]


# --- examples for test deliveries ------------------------------------------------------------------------------

_EXAMPLES: dict[str, Callable[[object], dict]] = {}


def register_example(event_type: str, builder: Callable[[object], dict]) -> None:
    """`builder(org)` returns a realistic `data` of `event_type`, built by the owning app's payload builders from
    unsaved rows (nothing is written)."""
    _EXAMPLES[event_type] = builder


def example_data(event_type: str, org) -> dict:
    data = _EXAMPLES[event_type](org)
    return {**data, "sequence": 1} if event_type in CALL_ID_FIELDS else data


def _operational_example(event_type: str) -> Callable[[object], dict]:
    """The webhook subscriptions' own events: this app's, so their examples are built here."""

    def build(org) -> dict:
        now = timezone.now()
        base = {"subscription_id": str(uuid.uuid4()), "url": "https://hooks.example.com/voice-agent"}
        if event_type == "webhook_subscription.failing":
            return {**base, "consecutive_failures": 4, "failing_since": iso_ms(now - timedelta(minutes=35)),
                    "last_status_code": 503, "last_error": "HTTP 503"}
        if event_type == "webhook_subscription.disabled":
            return {**base, "reason": "The endpoint answered 410 Gone.", "disabled_at": iso_ms(now)}
        return {**base, "failing_since": iso_ms(now - timedelta(hours=2)), "recovered_at": iso_ms(now)}

    return build


for _type in ("webhook_subscription.failing", "webhook_subscription.disabled", "webhook_subscription.recovered"):
    register_example(_type, _operational_example(_type))
