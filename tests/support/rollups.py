"""The calls rollup computed the slow way, in Python, from the calls themselves: what the triggers must agree with."""

from collections import Counter, defaultdict
from datetime import timedelta
from zoneinfo import ZoneInfo

from calls.models import Booking, Call, CallFieldRollup, CallRollup, Order
from tests.support.runtime import T0, completion, iso

METRICS = ["calls", "real_engagements", "escalations", "duration_sum", "duration_count", "score_sum", "score_count",
           "bookings", "orders", "unanswered_questions"]


def expected_rollup(org) -> dict:
    """{(day, location_id, outcome): {metric: value}} from the org's calls, days in its current zone."""
    org.refresh_from_db()
    zone = ZoneInfo(org.time_zone)
    bookings = Counter(Booking.objects.filter(organization=org, call__isnull=False).values_list("call_id", flat=True))
    orders = set(Order.objects.filter(organization=org).values_list("call_id", flat=True))
    rows = defaultdict(Counter)
    for call in Call.objects.filter(organization=org):
        row = rows[(call.started_at.astimezone(zone).date(), call.location_id, call.outcome or "")]
        row["calls"] += 1
        row["real_engagements"] += call.classification == "real_engagement"
        row["escalations"] += call.disposition == "escalated"
        if call.duration_seconds is not None:
            row["duration_sum"] += call.duration_seconds
            row["duration_count"] += 1
        if call.scorable and call.score is not None:
            row["score_sum"] += call.score
            row["score_count"] += 1
        row["bookings"] += bookings[call.pk]
        row["orders"] += call.pk in orders
        row["unanswered_questions"] += len(call.unanswered_questions)
    return {key: {m: row[m] for m in METRICS} for key, row in rows.items()}


def stored_rollup(org) -> dict:
    """The rollup's rows of the org, all-zero ones (a moved call's old key) left out."""
    return {
        (row.day, row.location_id, row.outcome): {m: getattr(row, m) for m in METRICS}
        for row in CallRollup.objects.filter(organization=org)
        if any(getattr(row, m) for m in METRICS)
    }


def expected_field_rollup(org) -> dict:
    """{(day, location_id, outcome, name): [sum, count]} of the number fields' values, from the org's calls."""
    org.refresh_from_db()
    zone = ZoneInfo(org.time_zone)
    rows = defaultdict(lambda: [0, 0])
    for call in Call.objects.filter(organization=org):
        for name, stored in call.fields.items():
            value = stored.get("value") if isinstance(stored, dict) else None
            if stored.get("type") == "number" and isinstance(value, int | float) and not isinstance(value, bool):
                row = rows[(call.started_at.astimezone(zone).date(), call.location_id, call.outcome or "", name)]
                row[0] += value
                row[1] += 1
    return {key: row for key, row in rows.items()}


def stored_field_rollup(org) -> dict:
    return {
        (row.day, row.location_id, row.outcome, row.name): [row.value_sum, row.value_count]
        for row in CallFieldRollup.objects.filter(organization=org)
        if row.value_count
    }


def calls_around_midnight(runtime, locations):
    """Calls around midnight in New York and Los Angeles, of each kind the figures tell apart."""
    kinds = [
        dict(outcome="order"),
        dict(outcome="question", order=None, disposition="escalated", unanswered_questions=["Vegan?", "Parking?"]),
        dict(outcome="", order=None, classification="robocall"),
        dict(outcome="message", order=None, classification="wrong_number_hangup", disposition="transferred"),
    ]
    made = []
    for index in range(12):
        started = T0 + timedelta(hours=index * 2 + 0.25)
        call_id, response = runtime.start(started_at=started, location_id=locations[index % len(locations)])
        assert response.status_code == 201, response.content
        if index % 5 != 4:  # some stay in progress
            body = completion(ended_at=iso(started + timedelta(seconds=30 + index)), **kinds[index % len(kinds)])
            assert runtime.complete(call_id, **body).status_code == 200
        made.append(call_id)
    return made
