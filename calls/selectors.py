"""Org-scoped reads of calls and bookings."""

from datetime import timedelta

from django.db import connection
from django.db.models import Count, Exists, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from core.errors import NotFound
from orgs.models import Organization
from orgs.tenancy import get_for_org

from . import search
from .call_fields import call_field_filter
from .errors import CallNotFound
from .models import Booking, Call, CallbackRequest, Escalation, Message, Order, OrderStatus


def call_list(*, org: Organization, **filters):
    """The org's calls with their order and recording joined (one query per page, whatever its size), filtered as
    `call_filter` does.

    A list shows no transcript, quality checks or order lines: those JSON columns are left unread, which is
    most of a page's decoding cost (a detail read uses call_get)."""
    return call_filter(org=org, **filters).select_related("order", "recording").defer(
        "transcript", "quality_checks", "evidence_marks", "order__items", "order__order_answers"
    )


def call_filter(
    *, org: Organization, since=None, until=None, location_id=None, contact_id=None, outcome=None,
    disposition=None, scorable=None, classification=None, has_recording=None, direction=None, status=None, q=None,
    fields: dict[str, str] | None = None, has_booking=None, has_unanswered_questions=None,
):
    """The org's calls that pass the list's filters, nothing joined: for a page PostgreSQL renders
    (calls.payloads.call_data_sql), where joins and deferred columns would only cost compiling. `fields` are
    `{call field name: raw value}` (calls.call_fields.call_field_filter)."""
    calls = Call.objects.for_org(org)
    if fields:
        calls = calls.filter(call_field_filter(org=org, raw=fields))
    if disposition is not None:
        calls = calls.filter(disposition=disposition)
    if scorable is not None:
        calls = calls.filter(scorable=scorable)
    if since is not None:
        calls = calls.filter(started_at__gte=since)
    if until is not None:
        calls = calls.filter(started_at__lt=until)
    if location_id is not None:
        calls = calls.filter(location_id=location_id)
    if contact_id is not None:
        calls = calls.filter(contact_id=contact_id)
    if outcome is not None:
        calls = calls.filter(outcome=outcome)
    if classification is not None:
        calls = calls.filter(classification=classification)
    if has_recording is not None:
        calls = calls.filter(recording__isnull=not has_recording)
    if direction is not None:
        calls = calls.filter(direction=direction)
    if status is not None:
        calls = calls.filter(status=status)
    # The two below let each analytics figure link to the calls it counts (dashboard/pages/analytics.py).
    if has_booking is not None:
        booked = Exists(Booking.objects.filter(call=OuterRef("pk")))
        calls = calls.filter(booked if has_booking else ~booked)
    if has_unanswered_questions is not None:
        unanswered = Q(unanswered_questions=[])
        calls = calls.exclude(unanswered) if has_unanswered_questions else calls.filter(unanswered)
    if q:
        calls = search.matching(calls, q)
    return calls


def call_get(*, org: Organization, call_id) -> Call:
    """One call of the org with its order and recording joined, or CallNotFound (also for an id that is not a UUID
    or is another org's)."""
    try:
        return get_for_org(Call.objects.select_related("order", "recording"), org, call_id)
    except NotFound:
        raise CallNotFound() from None


def call_order(call: Call):
    """The call's order or None, from the joined row (no query when `select_related("order")` was used)."""
    try:
        return call.order
    except Call.order.RelatedObjectDoesNotExist:
        return None


def call_recording(call: Call):
    """The call's recording or None, from the joined row (no query when `select_related("recording")` was used)."""
    try:
        return call.recording
    except Call.recording.RelatedObjectDoesNotExist:
        return None


def booking_list(*, org: Organization, calendar_id=None, location_id=None, contact_id=None, status=None, since=None,
                 until=None, before=None):
    """The org's bookings that pass the filters: the /v1/bookings list and the Bookings page. `since` and `until`
    bound `start_at` inclusively, `before` exclusively (the page's whole days). Nothing joined and no order: the
    caller pages it its own way."""
    rows = Booking.objects.for_org(org)
    for field, value in (("calendar_id", calendar_id), ("location_id", location_id), ("contact_id", contact_id),
                         ("status", status)):
        if value is not None:
            rows = rows.filter(**{field: value})
    if since is not None:
        rows = rows.filter(start_at__gte=since)
    if until is not None:
        rows = rows.filter(start_at__lte=until)
    if before is not None:
        rows = rows.filter(start_at__lt=before)
    return rows


def runtime_call(*, org: Organization, runtime_call_id: str) -> Call:
    """The org's call by the runtime's own call id, or CallNotFound."""
    call = Call.objects.for_org(org).filter(runtime_call_id=runtime_call_id).first()
    if call is None:
        raise CallNotFound()
    return call


# --- the dashboard's overview and inbox (aggregated in SQL: a constant number of queries) -------------------


def call_overview(*, org: Organization, today_start, week_start) -> dict:
    """Counts for the overview: calls today and this week, outcomes this week, and what waits on the team.

    Four queries whatever the data size. `today_start` / `week_start` are aware datetimes chosen by the caller.
    """
    calls = Call.objects.for_org(org)
    totals = calls.aggregate(
        today=Count("id", filter=Q(started_at__gte=today_start)),
        week=Count("id", filter=Q(started_at__gte=week_start)),
    )
    outcomes = list(
        calls.filter(started_at__gte=week_start)
        .values("outcome")
        .annotate(today=Count("id", filter=Q(started_at__gte=today_start)), week=Count("id"))
        .order_by("-week", "outcome")
    )
    orders = Order.objects.for_org(org).aggregate(
        new=Count("id", filter=Q(status=OrderStatus.NEW)),
        in_progress=Count("id", filter=Q(status=OrderStatus.IN_PROGRESS)),
    )
    # The three inbox counts in one round trip: scalar subqueries on the org's own row.
    waiting = Organization.objects.filter(pk=org.pk).values(
        callbacks=_open_count(CallbackRequest, org),
        messages=_open_count(Message, org),
        escalations=_open_count(Escalation, org),
    ).get()
    return {"totals": totals, "outcomes": outcomes, "orders": orders, "waiting": waiting}


def _open_count(model, org: Organization):
    rows = model.objects.for_org(org).filter(handled_at__isnull=True).order_by().values("organization")
    return Coalesce(Subquery(rows.annotate(n=Count("id")).values("n")[:1]), 0)


def calls_per_day(*, org: Organization, since) -> list[dict]:
    """`[{day, outcome, calls, score_sum, scored}]` for calls started at or after `since`, grouped by the
    organization's local day and outcome. One query; the caller fills in empty days and averages the scores."""
    return list(
        Call.objects.for_org(org)
        .filter(started_at__gte=since)
        .annotate(day=TruncDate("started_at", tzinfo=org.zone))
        .values("day", "outcome")
        .annotate(
            calls=Count("id"),
            score_sum=Sum("score", filter=Q(scorable=True)),
            scored=Count("score", filter=Q(scorable=True)),
        )
        .order_by("day", "outcome")
    )


INBOX_KINDS = {"callback": CallbackRequest, "message": Message, "escalation": Escalation}
_INBOX_RELATED = {
    "callback": ("call", "contact", "requested_team_member", "handled_by", "handled_by_key"),
    "message": ("call", "call__contact", "for_team_member", "handled_by", "handled_by_key"),
    "escalation": ("call", "call__contact", "destination_team_member", "handled_by", "handled_by_key"),
}


def inbox_list(*, org: Organization, kind: str, handled: bool | None = None):
    """The org's callback requests, messages or escalations (`kind`), newest first, with their call joined.
    `handled` False: still waiting on the team; True: handled; None: both."""
    items = INBOX_KINDS[kind].objects.for_org(org).select_related(*_INBOX_RELATED[kind])
    if handled is not None:
        items = items.filter(handled_at__isnull=not handled)
    return items.order_by("-created_at", "-id")


def follow_up_list(*, org: Organization, kind: str, handled: bool | None = None, location_id=None, since=None,
                   until=None, call_id=None):
    """The API's callbacks, messages or escalations (`kind`) of the org: only what an event announced (a message
    of an unscorable call was never sent, so it is not listed either). `since`/`until` bound `created_at`, both
    inclusive; `location_id` is the call's."""
    items = INBOX_KINDS[kind].objects.for_org(org).select_related(*_INBOX_RELATED[kind])
    if kind == "message":
        items = items.filter(call__scorable=True)
    if handled is not None:
        items = items.filter(handled_at__isnull=not handled)
    if location_id:
        items = items.filter(call__location_id=location_id)
    if since:
        items = items.filter(created_at__gte=since)
    if until:
        items = items.filter(created_at__lte=until)
    if call_id:
        items = items.filter(call_id=call_id)
    return items


def order_list(*, org: Organization, status=None, location_id=None, since=None, until=None):
    """The org's orders; `since`/`until` bound `placed_at` (both inclusive), `location_id` is the call's."""
    orders = Order.objects.for_org(org)
    if status:
        orders = orders.filter(status=status)
    if location_id:
        orders = orders.filter(call__location_id=location_id)
    if since:
        orders = orders.filter(placed_at__gte=since)
    if until:
        orders = orders.filter(placed_at__lte=until)
    return orders


# --- what the agent knew ------------------------------------------------------------------------------------------

FACT_USE_WINDOW = timedelta(days=30)


def fact_use_counts(*, org: Organization, now=None) -> dict[str, int]:
    """Per fact id, how many of the calls `org` can see (its scope's, for a location manager) of the last 30 days
    relied on it (one query, whatever the facts). The calls come from `for_org`, so the count never tells one
    location's manager another location's call volume."""
    since = (now or timezone.now()) - FACT_USE_WINDOW
    calls = Call.objects.for_org(org).filter(started_at__gte=since).exclude(facts_used=[]).values("id")
    sql, params = calls.query.sql_with_params()
    # The ORM's own SQL inside: its values are in params.
    query = f"""SELECT used->>'id', count(DISTINCT c.id) FROM calls_call c, jsonb_array_elements(c.facts_used) used
        WHERE c.id IN ({sql}) GROUP BY 1"""  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(query, params)
        return dict(cursor.fetchall())


def calls_with_unanswered_questions(*, org: Organization):
    """The org's completed calls that left a question unanswered, newest first."""
    return (Call.objects.for_org(org).exclude(unanswered_questions=[]).filter(status=Call.Status.COMPLETED)
            .order_by("-ended_at", "-id").only("id", "started_at", "ended_at", "unanswered_questions", "summary"))
