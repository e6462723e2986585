"""Orders taken on calls: placing one at the call's completion (its number, line totals, deadlines) and moving it
through its statuses, by the team (dashboard, API) or by the caller phoning back to cancel."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from audit import services as audit
from core.errors import InvalidTransition, NotFound, ValidationFailed
from core.timefmt import iso_ms
from orgs.models import Organization
from webhooks.services import emit

from .. import payloads
from ..errors import CancellationWindowClosed
from ..models import ORDER_TRANSITIONS, Call, CancelSource, Order, OrderCounter, OrderStatus

TIME_UNITS = {"minutes": 60, "hours": 3600, "days": 86400}


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


def _order_items(items: list[dict]) -> tuple[list[dict], int]:
    """Items in the order object's shape (docs/api.md#orders) with `line_total_cents` computed: quantity x (unit
    price + modifier prices)."""
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


def order_create(*, call: Call, data: OrderInput, placed_at: datetime) -> Order:
    """Places the call's order (status `new`); `placed_at` unless the runtime sent its own. Emits nothing (the
    order goes out inside `call.ended`). The caller holds the call's lock and the transaction."""
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
        # The order by the id the API knows it by (`/v1/orders/{call_id}`): its own key is shown nowhere, and the
        # trail filtered by `target_id` must find it.
        audit.record(org=call.organization, action="order.status_changed", target=order, target_id=call.pk,
                     target_label=f"Order #{order.call_order_number}",
                     changes={"status": [previous, status], **({"canceled_by": [None, source]}
                                                              if status == OrderStatus.CANCELED else {})})
        emit(
            org=call.organization,
            type="call_order.status_changed",
            data=payloads.order_status_changed_data(
                order=order, previous_status=previous, changed_at=now, changed_by=changed_by
            ),
            location_id=call.location_id,
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
                     "cancellation_deadline_at": iso_ms(order.cancellation_deadline_at)},
        )
    return order_set_status(
        call=order.call, status=OrderStatus.CANCELED, changed_by=None, source=CancelSource.CALLER_VIA_PHONE, now=now
    )
