"""Many completed calls of one organization in one INSERT ... SELECT (a million in well under a minute): for the
exports' memory test and `make bench` (bench/exports.py). Each has a summary, tags, a trail and a call field, so a
CSV line is about as long as a real one."""

from datetime import datetime, timedelta

from django.db import connection

from calls.models import Call

SUMMARY = "Jordan ordered two pepperoni pizzas and a tiramisu for pickup, and asked about parking, twice."


def insert_calls(org_id, count: int, *, newest: datetime, **overrides) -> None:
    """`count` calls of the org started a second apart, the newest at `newest`; `overrides` set other fields of
    every row (a transcript, a caller's number)."""
    template = Call(
        organization_id=org_id, runtime_call_id="", status="completed", started_at=newest,
        ended_at=newest + timedelta(seconds=95), duration_seconds=95, from_number="+14155550123",
        disposition="completed", classification="real_engagement", scorable=True, score=87, summary=SUMMARY,
        outcome="order", outcome_tags=["order", "pickup"], trail=["Took an order", "Gave a ready time"],
        fields={"party_size": {"label": "Party size", "type": "number", "value": 4, "evidence": None,
                               "evidence_verified": None}},
    )
    for field, value in overrides.items():
        setattr(template, field, value)
    now = datetime.now(tz=newest.tzinfo)
    template.created_at = template.updated_at = now
    varying = {
        "id": "gen_random_uuid()",
        "runtime_call_id": "'bulk-' || g || '-' || gen_random_uuid()",
        "started_at": "%(newest)s::timestamptz - make_interval(secs => g)",
        "ended_at": "%(newest)s::timestamptz - make_interval(secs => g) + interval '95 seconds'",
    }
    columns, values, params = [], [], {"newest": newest, "count": count}
    for field in Call._meta.concrete_fields:
        columns.append(f'"{field.column}"')
        if field.column in varying:
            values.append(varying[field.column])
        else:
            params[field.column] = field.get_db_prep_save(getattr(template, field.attname), connection)
            values.append(f"%({field.column})s")
    sql = (f"INSERT INTO calls_call ({', '.join(columns)}) SELECT {', '.join(values)} "  # noqa: S608 - model metadata
           "FROM generate_series(1, %(count)s) AS g")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        cursor.execute("ANALYZE calls_call")
