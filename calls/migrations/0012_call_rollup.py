"""The calls rollup the analytics read (CallRollup): the table, the triggers that keep it, and its backfill."""

import django.db.models.deletion
from django.db import migrations, models

# --- the triggers that keep calls_callrollup in step (see CallRollup) -------------------------------------------
# Every writer takes a shared transaction-level advisory lock per organization before it reads the org's time zone;
# a time zone change takes it exclusively before it rebuilds: a write either lands before the rebuild (which then
# reads it from the calls) or waits for the new zone, never both or neither.
LOCK_CLASS = 29_0002

METRICS = ["calls", "real_engagements", "escalations", "duration_sum", "duration_count", "score_sum", "score_count",
           "bookings", "orders", "unanswered_questions"]


def _call_contribution(alias: str, sign: str) -> str:
    """One call's figures (times `sign`), with its key, from a row of calls_call named `alias`."""
    c = alias
    return f"""SELECT {c}.organization_id, {c}.started_at, {c}.location_id, coalesce({c}.outcome, '') AS outcome,
        {sign} AS calls,
        {sign} * ({c}.classification IS NOT DISTINCT FROM 'real_engagement')::int AS real_engagements,
        {sign} * ({c}.disposition IS NOT DISTINCT FROM 'escalated')::int AS escalations,
        {sign} * coalesce({c}.duration_seconds, 0)::bigint AS duration_sum,
        {sign} * ({c}.duration_seconds IS NOT NULL)::int AS duration_count,
        {sign} * (CASE WHEN {c}.scorable AND {c}.score IS NOT NULL THEN {c}.score ELSE 0 END)::bigint AS score_sum,
        {sign} * ({c}.scorable AND {c}.score IS NOT NULL)::int AS score_count,
        {sign} * (SELECT count(*) FROM calls_booking b WHERE b.call_id = {c}.id)::int AS bookings,
        {sign} * (SELECT count(*) FROM calls_order o WHERE o.call_id = {c}.id)::int AS orders,
        {sign} * (CASE WHEN jsonb_typeof({c}.unanswered_questions) = 'array'
                  THEN jsonb_array_length({c}.unanswered_questions) ELSE 0 END) AS unanswered_questions"""


def _apply(delta: str) -> str:
    """Adds the rows of `delta` (a key and METRICS each) to the rollup, in the org's zone, under the shared lock."""
    sums = ", ".join(f"sum(d.{m})" for m in METRICS)
    updates = ", ".join(f"{m} = r.{m} + EXCLUDED.{m}" for m in METRICS)
    return f"""
    PERFORM pg_advisory_xact_lock_shared({LOCK_CLASS}, hashtext(s.organization_id::text))
       FROM (SELECT DISTINCT organization_id FROM ({delta}) d ORDER BY 1) s;
    INSERT INTO calls_callrollup AS r (organization_id, day, location_id, outcome, {", ".join(METRICS)})
    SELECT d.organization_id, (d.started_at AT TIME ZONE z.time_zone)::date, d.location_id, d.outcome, {sums}
      FROM ({delta}) d JOIN orgs_organization z ON z.id = d.organization_id
     GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT ON CONSTRAINT uniq_call_rollup_key DO UPDATE SET {updates};"""


# What a change to a call can change in its figures or key.
_COUNTED = ["organization_id", "started_at", "location_id", "outcome", "classification", "disposition",
            "duration_seconds", "scorable", "score", "unanswered_questions"]
_CHANGED = " OR ".join(f"n.{col} IS DISTINCT FROM o.{col}" for col in _COUNTED)


def _linked_delta(rows: str, sign: str, metric: str, where: str = "TRUE") -> str:
    """A booking's or order's +-1 on the key of the call it belongs to."""
    zeros = ", ".join(f"{sign} AS {m}" if m == metric else f"0 AS {m}" for m in METRICS)
    return f"""SELECT c.organization_id, c.started_at, c.location_id, coalesce(c.outcome, '') AS outcome, {zeros}
      FROM {rows} x JOIN calls_call c ON c.id = x.call_id WHERE {where}"""


def _function(name: str, body: str) -> str:
    return f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n{body}\nRETURN NULL;\nEND $$;\n"


def _linked_function(name: str, metric: str) -> str:
    return _function(name, f"""
    IF TG_OP = 'INSERT' THEN {_apply(_linked_delta("new_rows", "1", metric, "x.call_id IS NOT NULL"))}
    ELSIF TG_OP = 'DELETE' THEN {_apply(_linked_delta("old_rows", "-1", metric, "x.call_id IS NOT NULL"))}
    ELSE {_apply(f'''{_linked_delta("old_rows", "-1", metric,
                                    "x.call_id IS NOT NULL AND x.call_id IS DISTINCT FROM (SELECT n.call_id FROM new_rows n WHERE n.id = x.id)")}
                UNION ALL {_linked_delta("new_rows", "1", metric,
                                    "x.call_id IS NOT NULL AND x.call_id IS DISTINCT FROM (SELECT p.call_id FROM old_rows p WHERE p.id = x.id)")}''')}
    END IF;""")


def _triggers(table: str, function: str) -> str:
    return "".join(
        f"CREATE TRIGGER {function}_{op.lower()} AFTER {op} ON {table} REFERENCING {refs}"
        f" FOR EACH STATEMENT EXECUTE FUNCTION {function}();\n"
        for op, refs in (("INSERT", "NEW TABLE AS new_rows"), ("DELETE", "OLD TABLE AS old_rows"),
                         ("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"))
    )


_REBUILD_SUMS = """count(*),
        count(*) FILTER (WHERE c.classification = 'real_engagement'),
        count(*) FILTER (WHERE c.disposition = 'escalated'),
        coalesce(sum(c.duration_seconds), 0), count(c.duration_seconds),
        coalesce(sum(c.score) FILTER (WHERE c.scorable), 0), count(c.score) FILTER (WHERE c.scorable),
        coalesce(sum(b.n), 0), count(ord.id),
        coalesce(sum(CASE WHEN jsonb_typeof(c.unanswered_questions) = 'array'
                          THEN jsonb_array_length(c.unanswered_questions) ELSE 0 END), 0)"""

SQL = f"""
ALTER TABLE calls_callrollup ADD CONSTRAINT calls_callrollup_org_fk FOREIGN KEY (organization_id)
    REFERENCES orgs_organization (id) ON DELETE CASCADE;

CREATE FUNCTION calls_rollup_rebuild(org uuid) RETURNS void LANGUAGE plpgsql AS $$
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
     GROUP BY 1, 2, 3, 4;
END $$;

{_function("calls_rollup_on_call", f'''
    IF TG_OP = 'INSERT' THEN {_apply(_call_contribution("n", "1") + " FROM new_rows n")}
    ELSIF TG_OP = 'DELETE' THEN {_apply(_call_contribution("o", "-1") + " FROM old_rows o")}
    ELSE {_apply(f"{_call_contribution('o', '-1')} FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE {_CHANGED}"
                 f" UNION ALL {_call_contribution('n', '1')} FROM new_rows n JOIN old_rows o ON o.id = n.id"
                 f" WHERE {_CHANGED}")}
    END IF;''')}
{_triggers("calls_call", "calls_rollup_on_call")}
{_linked_function("calls_rollup_on_booking", "bookings")}
{_triggers("calls_booking", "calls_rollup_on_booking")}
{_linked_function("calls_rollup_on_order", "orders")}
{_triggers("calls_order", "calls_rollup_on_order")}

CREATE FUNCTION calls_rollup_on_zone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM calls_rollup_rebuild(NEW.id);
    RETURN NULL;
END $$;
CREATE TRIGGER calls_rollup_on_zone AFTER UPDATE OF time_zone ON orgs_organization
    FOR EACH ROW WHEN (OLD.time_zone IS DISTINCT FROM NEW.time_zone) EXECUTE FUNCTION calls_rollup_on_zone();

SELECT calls_rollup_rebuild(id) FROM orgs_organization;
"""

REVERSE = """
DROP TRIGGER calls_rollup_on_zone ON orgs_organization;
DROP FUNCTION calls_rollup_on_zone();
""" + "".join(
    f"DROP TRIGGER {fn}_{op} ON {table}; " for table, fn in (("calls_call", "calls_rollup_on_call"),
                                                             ("calls_booking", "calls_rollup_on_booking"),
                                                             ("calls_order", "calls_rollup_on_order"))
    for op in ("insert", "delete", "update")
) + """
DROP FUNCTION calls_rollup_on_call(); DROP FUNCTION calls_rollup_on_booking(); DROP FUNCTION calls_rollup_on_order();
DROP FUNCTION calls_rollup_rebuild(uuid);
ALTER TABLE calls_callrollup DROP CONSTRAINT calls_callrollup_org_fk;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('calls', '0011_call_fields'),
        ('orgs', '0009_organization_time_zone'),
    ]

    operations = [
        migrations.CreateModel(
            name='CallRollup',
            fields=[
                ('id', models.BigAutoField(primary_key=True, serialize=False)),
                ('day', models.DateField()),
                ('location_id', models.UUIDField(null=True)),
                ('outcome', models.CharField(max_length=64)),
                ('calls', models.IntegerField(default=0)),
                ('real_engagements', models.IntegerField(default=0)),
                ('escalations', models.IntegerField(default=0)),
                ('duration_sum', models.BigIntegerField(default=0)),
                ('duration_count', models.IntegerField(default=0)),
                ('score_sum', models.BigIntegerField(default=0)),
                ('score_count', models.IntegerField(default=0)),
                ('bookings', models.IntegerField(default=0)),
                ('orders', models.IntegerField(default=0)),
                ('unanswered_questions', models.IntegerField(default=0)),
                ('organization', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='orgs.organization')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('organization', 'day', 'location_id', 'outcome'), name='uniq_call_rollup_key', nulls_distinct=False)],
            },
        ),
        migrations.RunSQL(SQL, REVERSE),
    ]
