"""Number call fields in the analytics: their rollup table (CallFieldRollup), kept by the calls rollup's triggers."""

import django.db.models.deletion
from django.db import migrations, models

# The functions of calls 0012 again (a migration stays as it was written), now also keeping calls_callfieldrollup:
# the call trigger adds each number field's value on the call's key, and the rebuild recomputes both tables. And a fix:
# 0012's orders subquery named calls_order `o`, as the trigger names a call's old row, so a counted change to a call
# with an order subtracted no order and added one; every organization's rollup is rebuilt below.
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


def _on_call(fields: bool) -> str:
    """The calls trigger's function; `fields`: with the field rollup (without: 0012's, for going back)."""

    def both(rows: str, sign: str, alias: str, where: str = "TRUE") -> str:
        sql = _apply(f"{_call_contribution(alias, sign)} FROM {rows} WHERE {where}")
        if fields:
            sql += _apply_fields(f"{_field_contribution(alias, sign)} FROM {rows} {_number_fields(alias)}"
                                 f" WHERE ({where}) AND {_IS_NUMBER}")
        return sql

    changed = _CHANGED if fields else _CHANGED.removesuffix(" OR n.fields IS DISTINCT FROM o.fields")
    return f"""
CREATE OR REPLACE FUNCTION calls_rollup_on_call() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN {both("new_rows n", "1", "n")}
    ELSIF TG_OP = 'DELETE' THEN {both("old_rows o", "-1", "o")}
    ELSE {both("old_rows o JOIN new_rows n ON n.id = o.id", "-1", "o", changed)}
         {both("new_rows n JOIN old_rows o ON o.id = n.id", "1", "n", changed)}
    END IF;
    RETURN NULL;
END $$;
"""

_REBUILD_SUMS = """count(*),
        count(*) FILTER (WHERE c.classification = 'real_engagement'),
        count(*) FILTER (WHERE c.disposition = 'escalated'),
        coalesce(sum(c.duration_seconds), 0), count(c.duration_seconds),
        coalesce(sum(c.score) FILTER (WHERE c.scorable), 0), count(c.score) FILTER (WHERE c.scorable),
        coalesce(sum(b.n), 0), count(ord.id),
        coalesce(sum(CASE WHEN jsonb_typeof(c.unanswered_questions) = 'array'
                          THEN jsonb_array_length(c.unanswered_questions) ELSE 0 END), 0)"""

_REBUILD_CALLS = f"""
CREATE OR REPLACE FUNCTION calls_rollup_rebuild(org uuid) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock({LOCK_CLASS}, hashtext(org::text));
    DELETE FROM calls_callrollup WHERE organization_id = org;
    INSERT INTO calls_callrollup (organization_id, day, location_id, outcome, {", ".join(METRICS)})
    SELECT c.organization_id, (c.started_at AT TIME ZONE z.time_zone)::date, c.location_id, coalesce(c.outcome, ''),
        {_REBUILD_SUMS}
      FROM calls_call c JOIN orgs_organization z ON z.id = c.organization_id
      LEFT JOIN (SELECT call_id, count(*) AS n FROM calls_booking WHERE organization_id = org AND call_id IS NOT NULL
                 GROUP BY call_id) b ON b.call_id = c.id
      LEFT JOIN calls_order ord ON ord.call_id = c.id
     WHERE c.organization_id = org
     GROUP BY 1, 2, 3, 4;"""
_REBUILD_FIELDS = f"""
    DELETE FROM calls_callfieldrollup WHERE organization_id = org;
    INSERT INTO calls_callfieldrollup (organization_id, day, location_id, outcome, name, value_sum, value_count)
    SELECT c.organization_id, (c.started_at AT TIME ZONE z.time_zone)::date, c.location_id, coalesce(c.outcome, ''),
           f.key, sum((f.value ->> 'value')::float8), count(*)
      FROM calls_call c JOIN orgs_organization z ON z.id = c.organization_id {_number_fields("c")}
     WHERE c.organization_id = org AND c.fields <> '{{}}'::jsonb AND {_IS_NUMBER}
     GROUP BY 1, 2, 3, 4, 5;"""
_REBUILD_END = """
END $$;
"""

SQL = f"""
ALTER TABLE calls_callfieldrollup ADD CONSTRAINT calls_callfieldrollup_org_fk FOREIGN KEY (organization_id)
    REFERENCES orgs_organization (id) ON DELETE CASCADE;
{_on_call(fields=True)}
{_REBUILD_CALLS}{_REBUILD_FIELDS}{_REBUILD_END}
SELECT calls_rollup_rebuild(id) FROM orgs_organization;
"""

REVERSE = f"""
{_on_call(fields=False)}
{_REBUILD_CALLS}{_REBUILD_END}
ALTER TABLE calls_callfieldrollup DROP CONSTRAINT calls_callfieldrollup_org_fk;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('calls', '0012_call_rollup'),
        ('orgs', '0010_location_scope'),
    ]

    operations = [
        migrations.CreateModel(
            name='CallFieldRollup',
            fields=[
                ('id', models.BigAutoField(primary_key=True, serialize=False)),
                ('day', models.DateField()),
                ('location_id', models.UUIDField(null=True)),
                ('outcome', models.CharField(max_length=64)),
                ('name', models.CharField(max_length=64)),
                ('value_sum', models.FloatField(default=0)),
                ('value_count', models.IntegerField(default=0)),
                ('organization', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='orgs.organization')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('organization', 'day', 'location_id', 'outcome', 'name'), name='uniq_call_field_rollup_key', nulls_distinct=False)],
            },
        ),
        migrations.RunSQL(SQL, REVERSE),
    ]
