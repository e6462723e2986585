"""The CSV columns of the calls side's exports (core/csvexport.py): for each kind, exactly the fields its `/v1` list
item has, in the same order, read straight from the rows (no model instance per row). tests/exports pins every
kind, row for row, to its list.
"""

from django.db.models import Exists, OuterRef, Subquery
from django.db.models.fields.json import KeyTransform

from core.csvexport import Column
from knowledge.selectors import call_field_list

from .models import Order, Recording


def _columns(*names: str, **special: Column) -> list[Column]:
    return [special.get(name) or Column(name) for name in names]


def _handled_by(values: tuple) -> dict | None:
    """The list's `handled_by` object from (user id, user e-mail, key id, key name)."""
    user_id, email, key_id, key_name = values
    if user_id:
        return {"type": "user", "id": str(user_id), "name": email}
    if key_id:
        return {"type": "api_key", "id": str(key_id), "name": key_name}
    return None


def _redaction(stored: dict) -> dict:
    """The list's `redaction` object, its keys in the list's order (PostgreSQL's jsonb keeps them in its own)."""
    return {"detector_version": stored.get("detector_version"), "counts": stored.get("counts", {}),
            "recording_withheld": stored.get("recording_withheld", False)}


_HANDLED = {
    "handled": Column("handled", source="handled_at", render=lambda when: when is not None),
    "handled_by": Column("handled_by", source=("handled_by_id", "handled_by__email", "handled_by_key_id",
                                               "handled_by_key__name"), render=_handled_by),
    "location_id": Column("location_id", source="call__location_id"),
}


def call_columns(org) -> list[Column]:
    """`GET /v1/calls`'s item, then one `fields.<name>` column per call field name the organization has now: the
    value the call stored under that name, empty when it has none (a call stored under a name since renamed keeps
    it under the old one, which is no longer a column). Definitions of one name at different locations share its
    column: a call stores a name under the one definition of its location. The recording and the order are probed
    per row (an index read each), as the list's SQL does: a join would let the planner sort the whole result
    before the first row leaves."""
    names = call_field_list(org=org).order_by("name").values_list("name", flat=True).distinct()
    return [*_call_columns(), *(
        Column(f"fields.{name}", source=KeyTransform("value", KeyTransform(name, "fields"))) for name in names
    )]


def _call_columns() -> list[Column]:
    return _columns(
        "id", "location_id", "contact_id", "started_at", "ended_at", "duration_seconds", "direction", "from_number",
        "disposition", "classification", "scorable", "score", "summary", "outcome", "outcome_tags", "trail",
        "has_recording", "order_status", "status", "redaction", "content_deleted_at", "content_deleted_reason",
        has_recording=Column("has_recording", source=Exists(Recording.objects.filter(call=OuterRef("pk")))),
        redaction=Column("redaction", render=_redaction),
        order_status=Column("order_status", source=Subquery(
            Order.objects.filter(call=OuterRef("pk")).values("status")[:1])),
    )


BOOKING_COLUMNS = _columns(
    "id", "call_id", "calendar_id", "location_id", "contact_id", "start_at", "end_at", "timezone", "contact_name",
    "contact_email", "contact_phone", "status", "created_at", "updated_at",
)

ORDER_COLUMNS = _columns(
    "call_id", "order_status", "call_order_number", "profile_id", "profile_name", "items", "order_answers",
    "subtotal_cents", "total_cents", "fulfillment_estimate_value", "fulfillment_estimate_unit",
    "fulfillment_estimate_label", "fulfillment_varies", "expected_fulfillment_at", "cancellation_allowed",
    "cancellation_window_value", "cancellation_window_unit", "cancellation_deadline_at", "placed_at", "canceled_at",
    "canceled_by", "payment_status", "external_order_id", "payment_collected_at",
    order_status=Column("order_status", source="status"),
)

FOLLOW_UP_COLUMNS = {
    "callback": _columns(
        "id", "call_id", "location_id", "contact_id", "callback_number", "requested_window", "custom_window",
        "reason", "requested_team_member_id", "handled", "handled_at", "handled_by", "created_at", **_HANDLED,
    ),
    "message": _columns(
        "id", "call_id", "location_id", "contact_id", "for_team_member_id", "for_team_member_name", "message",
        "caller_name", "callback_number", "handled", "handled_at", "handled_by", "created_at", **_HANDLED,
        contact_id=Column("contact_id", source="call__contact_id"),
    ),
    "escalation": _columns(
        "id", "call_id", "location_id", "rule_id", "rule_name", "destination_type", "destination_id",
        "destination_phone", "triggered_by", "context", "handled", "handled_at", "handled_by", "created_at",
        **_HANDLED, destination_id=Column("destination_id", source="destination_team_member_id"),
    ),
}
