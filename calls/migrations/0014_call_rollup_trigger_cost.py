"""The calls rollup's trigger on calls_call does less per write: a statement that changes nothing the rollups count
(a tool event's trail, the recording flag...) returns at once; a counted change moves the old and the new figures in one
upsert per table instead of two; the field rollup's statement runs only when a row has call fields. Same results."""

from django.db import migrations

LOCK_CLASS = 29_0002

METRICS = ["calls", "real_engagements", "escalations", "duration_sum", "duration_count", "score_sum", "score_count",
           "bookings", "orders", "unanswered_questions"]


def _call_contribution(c: str, sign: str) -> str:
    """One call's figures (times `sign`), with its key, from a row of calls_call named `c`."""
    return f"""SELECT {c}.organization_id, {c}.started_at, {c}.location_id, coalesce({c}.outcome, '') AS outcome,
        {sign} AS calls,
        {sign} * ({c}.classification IS NOT DISTINCT FROM 'real_engagement')::int AS real_engagements,
        {sign} * ({c}.disposition IS NOT DISTINCT FROM 'escalated')::int AS escalations,
        {sign} * coalesce({c}.duration_seconds, 0)::bigint AS duration_sum,
        {sign} * ({c}.duration_seconds IS NOT NULL)::int AS duration_count,
        {sign} * (CASE WHEN {c}.scorable AND {c}.score IS NOT NULL THEN {c}.score ELSE 0 END)::bigint AS score_sum,
        {sign} * ({c}.scorable AND {c}.score IS NOT NULL)::int AS score_count,
        {sign} * (SELECT count(*) FROM calls_booking booked WHERE booked.call_id = {c}.id)::int AS bookings,
        {sign} * (SELECT count(*) FROM calls_order placed WHERE placed.call_id = {c}.id)::int AS orders,
        {sign} * (CASE WHEN jsonb_typeof({c}.unanswered_questions) = 'array'
                  THEN jsonb_array_length({c}.unanswered_questions) ELSE 0 END) AS unanswered_questions"""


def _number_fields(c: str) -> str:
    """FROM-clause rows `f` of the `number` call fields with a number value, of a calls_call row named `c`."""
    return f"""CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof({c}.fields) = 'object' THEN {c}.fields
                                                  ELSE '{{}}'::jsonb END) f"""


_IS_NUMBER = "f.value ->> 'type' = 'number' AND jsonb_typeof(f.value -> 'value') = 'number'"


def _field_contribution(c: str, sign: str) -> str:
    return f"""SELECT {c}.organization_id, {c}.started_at, {c}.location_id, coalesce({c}.outcome, '') AS outcome,
        f.key AS name, {sign} * (f.value ->> 'value')::float8 AS value_sum, {sign} AS value_count"""


def _lock(delta: str) -> str:
    return f"""
    PERFORM pg_advisory_xact_lock_shared({LOCK_CLASS}, hashtext(s.organization_id::text))
       FROM (SELECT DISTINCT organization_id FROM ({delta}) d ORDER BY 1) s;"""


def _apply(delta: str) -> str:
    """Adds the rows of `delta` (a key and METRICS each) to the rollup, in the org's zone, under the shared lock."""
    sums = ", ".join(f"sum(d.{m})" for m in METRICS)
    updates = ", ".join(f"{m} = r.{m} + EXCLUDED.{m}" for m in METRICS)
    return _lock(delta) + f"""
    INSERT INTO calls_callrollup AS r (organization_id, day, location_id, outcome, {", ".join(METRICS)})
    SELECT d.organization_id, (d.started_at AT TIME ZONE z.time_zone)::date, d.location_id, d.outcome, {sums}
      FROM ({delta}) d JOIN orgs_organization z ON z.id = d.organization_id
     GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT ON CONSTRAINT uniq_call_rollup_key DO UPDATE SET {updates};"""


def _apply_fields(delta: str) -> str:
    """Adds the rows of `delta` (a key, a field name, value_sum and value_count) to the field rollup."""
    return f"""
    INSERT INTO calls_callfieldrollup AS r (organization_id, day, location_id, outcome, name, value_sum, value_count)
    SELECT d.organization_id, (d.started_at AT TIME ZONE z.time_zone)::date, d.location_id, d.outcome, d.name,
           sum(d.value_sum), sum(d.value_count)
      FROM ({delta}) d JOIN orgs_organization z ON z.id = d.organization_id
     GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT ON CONSTRAINT uniq_call_field_rollup_key DO UPDATE
       SET value_sum = r.value_sum + EXCLUDED.value_sum, value_count = r.value_count + EXCLUDED.value_count;"""


# What a change to a call can change in its figures or key.
_COUNTED = ["organization_id", "started_at", "location_id", "outcome", "classification", "disposition",
            "duration_seconds", "scorable", "score", "unanswered_questions", "fields"]
_CHANGED = " OR ".join(f"n.{col} IS DISTINCT FROM o.{col}" for col in _COUNTED)



def _on_call_0013() -> str:
    """0013's function, for going back."""

    def both(rows: str, sign: str, alias: str, where: str = "TRUE") -> str:
        return (_apply(f"{_call_contribution(alias, sign)} FROM {rows} WHERE {where}")
                + _apply_fields(f"{_field_contribution(alias, sign)} FROM {rows} {_number_fields(alias)}"
                                f" WHERE ({where}) AND {_IS_NUMBER}"))

    return f"""
CREATE OR REPLACE FUNCTION calls_rollup_on_call() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN {both("new_rows n", "1", "n")}
    ELSIF TG_OP = 'DELETE' THEN {both("old_rows o", "-1", "o")}
    ELSE {both("old_rows o JOIN new_rows n ON n.id = o.id", "-1", "o", _CHANGED)}
         {both("new_rows n JOIN old_rows o ON o.id = n.id", "1", "n", _CHANGED)}
    END IF;
    RETURN NULL;
END $$;
"""


_OLD = "old_rows o JOIN new_rows n ON n.id = o.id"
_NEW = "new_rows n JOIN old_rows o ON o.id = n.id"

ON_CALL = f"""
CREATE OR REPLACE FUNCTION calls_rollup_on_call() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        {_apply(f"{_call_contribution('n', '1')} FROM new_rows n")}
        IF EXISTS (SELECT 1 FROM new_rows n WHERE n.fields <> '{{}}'::jsonb) THEN
            {_apply_fields(f"{_field_contribution('n', '1')} FROM new_rows n {_number_fields('n')} WHERE {_IS_NUMBER}")}
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        {_apply(f"{_call_contribution('o', '-1')} FROM old_rows o")}
        IF EXISTS (SELECT 1 FROM old_rows o WHERE o.fields <> '{{}}'::jsonb) THEN
            {_apply_fields(f"{_field_contribution('o', '-1')} FROM old_rows o {_number_fields('o')} WHERE {_IS_NUMBER}")}
        END IF;
    ELSE
        IF NOT EXISTS (SELECT 1 FROM {_OLD} WHERE {_CHANGED}) THEN
            RETURN NULL;
        END IF;
        {_apply(f"{_call_contribution('o', '-1')} FROM {_OLD} WHERE {_CHANGED}"
                f" UNION ALL {_call_contribution('n', '1')} FROM {_NEW} WHERE {_CHANGED}")}
        IF EXISTS (SELECT 1 FROM {_OLD} WHERE ({_CHANGED}) AND (o.fields <> '{{}}'::jsonb OR n.fields <> '{{}}'::jsonb))
        THEN
            {_apply_fields(f"{_field_contribution('o', '-1')} FROM {_OLD} {_number_fields('o')}"
                           f" WHERE ({_CHANGED}) AND {_IS_NUMBER}"
                           f" UNION ALL {_field_contribution('n', '1')} FROM {_NEW} {_number_fields('n')}"
                           f" WHERE ({_CHANGED}) AND {_IS_NUMBER}")}
        END IF;
    END IF;
    RETURN NULL;
END $$;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('calls', '0013_call_field_rollup'),
    ]

    operations = [
        migrations.RunSQL(ON_CALL, _on_call_0013()),
    ]
