"""The calls rollup without a hot row. A write to a call, booking or order appended its figures to the one row of its
(organization, local day, location, outcome) with an upsert, and held that row until it committed: every writer of a
big organization's busy location queued on it (bench.analytics, docs/benchmarks.md). Now its trigger
appends them to a delta table (calls_callrollupdelta, calls_callfieldrollupdelta) that no writer updates; the periodic
fold (calls_rollup_fold, run by calls.tasks.fold_rollup) moves the deltas into the folded rows; and calls_callrollup and
calls_callfieldrollup become views of folded rows plus unfolded deltas, so every read is exact at every instant (a
fold moves rows in one transaction, and a statement sees it whole or not at all).

The rows the rollup held are the folded ones: the tables are renamed, not copied. Going back folds every delta first.
"""

import importlib

import django.db.models.deletion
from django.db import migrations, models

m0012 = importlib.import_module("calls.migrations.0012_call_rollup")
m0013 = importlib.import_module("calls.migrations.0013_call_field_rollup")
m0014 = importlib.import_module("calls.migrations.0014_call_rollup_trigger_cost")
m0017 = importlib.import_module("calls.migrations.0017_rollup_ignores_content")

LOCK_CLASS = 29_0002  # the per-org lock of calls 0012: writers share it, a time zone change's rebuild takes it alone
FOLD_LOCK_CLASS = 29_0003  # one fold at a time
METRICS = m0012.METRICS
_KEY = "organization_id, day, location_id, outcome"
_FIELD_KEY = f"{_KEY}, name"
_FIELD_METRICS = ["value_sum", "value_count"]


def _lock(delta: str) -> str:
    return f"""
    PERFORM pg_advisory_xact_lock_shared({LOCK_CLASS}, hashtext(s.organization_id::text))
       FROM (SELECT DISTINCT organization_id FROM ({delta}) d ORDER BY 1) s;"""


def _any_moved(metrics: list[str]) -> str:
    return " OR ".join(f"sum(d.{m}) <> 0" for m in metrics)


def _append(delta: str) -> str:
    """Appends the rows of `delta` (a call's key and METRICS each), summed per key in the org's zone, to the deltas.
    A key whose figures cancel out (a change that moves nothing) appends nothing. The org's shared lock is held."""
    return f"""
    INSERT INTO calls_callrollupdelta ({_KEY}, {", ".join(METRICS)})
    SELECT d.organization_id, (d.started_at AT TIME ZONE z.time_zone)::date, d.location_id, d.outcome,
           {", ".join(f"sum(d.{m})" for m in METRICS)}
      FROM ({delta}) d JOIN orgs_organization z ON z.id = d.organization_id
     GROUP BY 1, 2, 3, 4 HAVING {_any_moved(METRICS)};"""


def _apply(delta: str) -> str:
    """`_append` under the shared lock of every org in `delta`: bookings' and orders' triggers."""
    return _lock(delta) + _append(delta)


def _append_fields(delta: str) -> str:
    """Appends the rows of `delta` (a key, a field name, value_sum and value_count) to the field deltas."""
    return f"""
    INSERT INTO calls_callfieldrollupdelta ({_FIELD_KEY}, value_sum, value_count)
    SELECT d.organization_id, (d.started_at AT TIME ZONE z.time_zone)::date, d.location_id, d.outcome, d.name,
           sum(d.value_sum), sum(d.value_count)
      FROM ({delta}) d JOIN orgs_organization z ON z.id = d.organization_id
     GROUP BY 1, 2, 3, 4, 5 HAVING {_any_moved(_FIELD_METRICS)};"""


_CHANGED = f"({m0017._CHANGED})"
_OLD = "old_rows o JOIN new_rows n ON n.id = o.id"
_call, _field, _numbers, _IS_NUMBER = (m0014._call_contribution, m0014._field_contribution, m0014._number_fields,
                                       m0014._IS_NUMBER)


def _lock_orgs(rows: str) -> str:
    return f"""
    PERFORM pg_advisory_xact_lock_shared({LOCK_CLASS}, hashtext(s.organization_id::text))
       FROM ({rows} ORDER BY 1) s;"""


# calls 0017's function (0014's shape: nothing counted changed, nothing done), appending instead of upserting, and
# doing less: the orgs are locked from the rows themselves (not from their figures, computed once more for it), and an
# update compares what it counts once per row (`moved`: 0017 compared it in each of four statements).
ON_CALL = f"""
CREATE OR REPLACE FUNCTION calls_rollup_on_call() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    moved uuid[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        {_lock_orgs("SELECT DISTINCT organization_id FROM new_rows")}
        {_append(f"{_call('n', '1')} FROM new_rows n")}
        IF EXISTS (SELECT 1 FROM new_rows n WHERE n.fields <> '{{}}'::jsonb) THEN
            {_append_fields(f"{_field('n', '1')} FROM new_rows n {_numbers('n')} WHERE {_IS_NUMBER}")}
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        {_lock_orgs("SELECT DISTINCT organization_id FROM old_rows")}
        {_append(f"{_call('o', '-1')} FROM old_rows o")}
        IF EXISTS (SELECT 1 FROM old_rows o WHERE o.fields <> '{{}}'::jsonb) THEN
            {_append_fields(f"{_field('o', '-1')} FROM old_rows o {_numbers('o')} WHERE {_IS_NUMBER}")}
        END IF;
    ELSE
        SELECT array_agg(o.id) INTO moved FROM {_OLD} WHERE {_CHANGED};
        IF moved IS NULL THEN
            RETURN NULL;
        END IF;
        {_lock_orgs("SELECT organization_id FROM old_rows WHERE id = ANY(moved) "
                    "UNION SELECT organization_id FROM new_rows WHERE id = ANY(moved)")}
        {_append(f"{_call('o', '-1')} FROM old_rows o WHERE o.id = ANY(moved)"
                 f" UNION ALL {_call('n', '1')} FROM new_rows n WHERE n.id = ANY(moved)")}
        IF EXISTS (SELECT 1 FROM {_OLD}
                    WHERE o.id = ANY(moved) AND (o.fields <> '{{}}'::jsonb OR n.fields <> '{{}}'::jsonb)) THEN
            {_append_fields(f"{_field('o', '-1')} FROM old_rows o {_numbers('o')}"
                            f" WHERE o.id = ANY(moved) AND {_IS_NUMBER}"
                            f" UNION ALL {_field('n', '1')} FROM new_rows n {_numbers('n')}"
                            f" WHERE n.id = ANY(moved) AND {_IS_NUMBER}")}
        END IF;
    END IF;
    RETURN NULL;
END $$;
"""


def _linked_function(name: str, metric: str, apply) -> str:
    """calls 0012's booking or order function (+-1 on the key of the call it belongs to) with `apply`."""
    delta = m0012._linked_delta
    now = "(SELECT n.call_id FROM new_rows n WHERE n.id = x.id)"
    was = "(SELECT p.call_id FROM old_rows p WHERE p.id = x.id)"
    return f"""
CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN {apply(delta("new_rows", "1", metric, "x.call_id IS NOT NULL"))}
    ELSIF TG_OP = 'DELETE' THEN {apply(delta("old_rows", "-1", metric, "x.call_id IS NOT NULL"))}
    ELSE {apply(delta("old_rows", "-1", metric, f"x.call_id IS NOT NULL AND x.call_id IS DISTINCT FROM {now}")
                + " UNION ALL "
                + delta("new_rows", "1", metric, f"x.call_id IS NOT NULL AND x.call_id IS DISTINCT FROM {was}"))}
    END IF;
    RETURN NULL;
END $$;
"""


def _linked_functions(apply) -> str:
    return (_linked_function("calls_rollup_on_booking", "bookings", apply)
            + _linked_function("calls_rollup_on_order", "orders", apply))


# A time zone change: every call of the org counted again into the folded rows, its deltas dropped (they are in the
# calls it counts), alone under the org's lock, so no writer's delta lands in between in the old zone.
REBUILD = f"""
CREATE OR REPLACE FUNCTION calls_rollup_rebuild(org uuid) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock({LOCK_CLASS}, hashtext(org::text));
    DELETE FROM calls_callrollupdelta WHERE organization_id = org;
    DELETE FROM calls_callrollupfolded WHERE organization_id = org;
    INSERT INTO calls_callrollupfolded ({_KEY}, {", ".join(METRICS)})
    SELECT c.organization_id, (c.started_at AT TIME ZONE z.time_zone)::date, c.location_id, coalesce(c.outcome, ''),
        {m0013._REBUILD_SUMS}
      FROM calls_call c JOIN orgs_organization z ON z.id = c.organization_id
      LEFT JOIN (SELECT call_id, count(*) AS n FROM calls_booking WHERE organization_id = org AND call_id IS NOT NULL
                 GROUP BY call_id) b ON b.call_id = c.id
      LEFT JOIN calls_order ord ON ord.call_id = c.id
     WHERE c.organization_id = org
     GROUP BY 1, 2, 3, 4;
    DELETE FROM calls_callfieldrollupdelta WHERE organization_id = org;
    DELETE FROM calls_callfieldrollupfolded WHERE organization_id = org;
    INSERT INTO calls_callfieldrollupfolded ({_FIELD_KEY}, value_sum, value_count)
    SELECT c.organization_id, (c.started_at AT TIME ZONE z.time_zone)::date, c.location_id, coalesce(c.outcome, ''),
           f.key, sum((f.value ->> 'value')::float8), count(*)
      FROM calls_call c JOIN orgs_organization z ON z.id = c.organization_id {_numbers("c")}
     WHERE c.organization_id = org AND c.fields <> '{{}}'::jsonb AND {_IS_NUMBER}
     GROUP BY 1, 2, 3, 4, 5;
END $$;
"""


def _fold_table(delta: str, folded: str, key: str, metrics: list[str], constraint: str) -> str:
    """Moves the `batch` oldest rows of `delta` (those committed) into `folded`, per key, in one statement; adds how
    many it moved to `moved`. Each org's shared lock first: a rebuild of the org in between would count them twice."""
    sums = ", ".join(f"sum({m})" for m in metrics)
    updates = ", ".join(f"{m} = r.{m} + EXCLUDED.{m}" for m in metrics)
    return f"""
    SELECT max(id) INTO upto FROM (SELECT id FROM {delta} ORDER BY id LIMIT batch) s;
    IF upto IS NOT NULL THEN
        SELECT array_agg(DISTINCT organization_id ORDER BY organization_id) INTO orgs FROM {delta} WHERE id <= upto;
        PERFORM pg_advisory_xact_lock_shared({LOCK_CLASS}, hashtext(o::text)) FROM unnest(orgs) o;
        WITH gone AS (DELETE FROM {delta} WHERE id <= upto AND organization_id = ANY(orgs) RETURNING *),
             added AS (INSERT INTO {folded} AS r ({key}, {", ".join(metrics)})
                       SELECT {key}, {sums} FROM gone GROUP BY {key} ORDER BY {key}
                       ON CONFLICT ON CONSTRAINT {constraint} DO UPDATE SET {updates})
        SELECT moved + count(*) INTO moved FROM gone;
    END IF;"""


FOLD = f"""
CREATE FUNCTION calls_rollup_fold(batch integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    upto bigint;
    orgs uuid[];
    moved integer := 0;
BEGIN
    -- Another fold at work: it is moving these rows, and this one would only wait on them.
    IF NOT pg_try_advisory_xact_lock({FOLD_LOCK_CLASS}, 0) THEN
        RETURN 0;
    END IF;
    {_fold_table("calls_callrollupdelta", "calls_callrollupfolded", _KEY, METRICS, "uniq_call_rollup_key")}
    {_fold_table("calls_callfieldrollupdelta", "calls_callfieldrollupfolded", _FIELD_KEY, _FIELD_METRICS,
                 "uniq_call_field_rollup_key")}
    RETURN moved;
END $$;
"""


def _view(name: str, folded: str, delta: str, key: str, metrics: dict[str, str]) -> str:
    columns = ", ".join(metrics)
    return f"""
CREATE VIEW {name} AS
SELECT max(r.id) AS id, {", ".join(f"r.{k}" for k in key.split(", "))},
       {", ".join(f"sum(r.{m})::{cast} AS {m}" for m, cast in metrics.items())}
  FROM (SELECT id, {key}, {columns} FROM {folded}
        UNION ALL SELECT -id, {key}, {columns} FROM {delta}) r
 GROUP BY {", ".join(f"r.{k}" for k in key.split(", "))};
"""


_TYPES = {m: "bigint" if m.endswith("_sum") else "integer" for m in METRICS}
VIEWS = (_view("calls_callrollup", "calls_callrollupfolded", "calls_callrollupdelta", _KEY, _TYPES)
         + _view("calls_callfieldrollup", "calls_callfieldrollupfolded", "calls_callfieldrollupdelta", _FIELD_KEY,
                 {"value_sum": "float8", "value_count": "integer"}))

RENAME = """
ALTER TABLE calls_callrollup RENAME TO calls_callrollupfolded;
ALTER INDEX calls_callrollup_pkey RENAME TO calls_callrollupfolded_pkey;
ALTER TABLE calls_callrollupfolded RENAME CONSTRAINT calls_callrollup_org_fk TO calls_callrollupfolded_org_fk;
ALTER TABLE calls_callfieldrollup RENAME TO calls_callfieldrollupfolded;
ALTER INDEX calls_callfieldrollup_pkey RENAME TO calls_callfieldrollupfolded_pkey;
ALTER TABLE calls_callfieldrollupfolded RENAME CONSTRAINT calls_callfieldrollup_org_fk
    TO calls_callfieldrollupfolded_org_fk;
"""
RENAME_BACK = """
ALTER TABLE calls_callrollupfolded RENAME TO calls_callrollup;
ALTER INDEX calls_callrollupfolded_pkey RENAME TO calls_callrollup_pkey;
ALTER TABLE calls_callrollup RENAME CONSTRAINT calls_callrollupfolded_org_fk TO calls_callrollup_org_fk;
ALTER TABLE calls_callfieldrollupfolded RENAME TO calls_callfieldrollup;
ALTER INDEX calls_callfieldrollupfolded_pkey RENAME TO calls_callfieldrollup_pkey;
ALTER TABLE calls_callfieldrollup RENAME CONSTRAINT calls_callfieldrollupfolded_org_fk TO calls_callfieldrollup_org_fk;
"""

SQL = f"""
ALTER TABLE calls_callrollupdelta ADD CONSTRAINT calls_callrollupdelta_org_fk FOREIGN KEY (organization_id)
    REFERENCES orgs_organization (id) ON DELETE CASCADE;
ALTER TABLE calls_callfieldrollupdelta ADD CONSTRAINT calls_callfieldrollupdelta_org_fk FOREIGN KEY (organization_id)
    REFERENCES orgs_organization (id) ON DELETE CASCADE;
{VIEWS}
{ON_CALL}
{_linked_functions(_apply)}
{REBUILD}
{FOLD}
"""

# Back to calls 0017: every delta folded (so the rows are the figures again), the views gone, the functions as they
# were (PL/pgSQL names its tables when it runs: they are renamed back by the next step).
REVERSE = f"""
SELECT calls_rollup_fold(NULL);
DROP FUNCTION calls_rollup_fold(integer);
DROP VIEW calls_callrollup;
DROP VIEW calls_callfieldrollup;
{m0017.ON_CALL}
{_linked_functions(m0012._apply)}
{m0013._REBUILD_CALLS}{m0013._REBUILD_FIELDS}{m0013._REBUILD_END}
"""


def _key_fields(index: bool = True):
    return [
        ('id', models.BigAutoField(primary_key=True, serialize=False)),
        ('day', models.DateField()),
        ('location_id', models.UUIDField(null=True)),
        ('outcome', models.CharField(max_length=64)),
        ('organization', models.ForeignKey(db_constraint=False, db_index=index,
                                           on_delete=django.db.models.deletion.DO_NOTHING, related_name='+',
                                           to='orgs.organization')),
    ]


_CALL_FIGURES = [(m, models.BigIntegerField(default=0) if m.endswith("_sum") else models.IntegerField(default=0))
                 for m in METRICS]
_FIELD_FIGURES = [
    ('name', models.CharField(max_length=64)),
    ('value_sum', models.FloatField(default=0)),
    ('value_count', models.IntegerField(default=0)),
]


class Migration(migrations.Migration):

    dependencies = [
        ('calls', '0018_location_in_orgs'),
        ('orgs', '0015_idempotency_fingerprint_keyed'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(RENAME, RENAME_BACK)],
            state_operations=[
                migrations.RemoveConstraint(model_name='callrollup', name='uniq_call_rollup_key'),
                migrations.RemoveConstraint(model_name='callfieldrollup', name='uniq_call_field_rollup_key'),
                migrations.AlterModelOptions(name='callrollup', options={'managed': False}),
                migrations.AlterModelOptions(name='callfieldrollup', options={'managed': False}),
                migrations.CreateModel(
                    name='CallRollupFolded',
                    fields=[*_key_fields(), *_CALL_FIGURES],
                    options={'constraints': [models.UniqueConstraint(
                        fields=('organization', 'day', 'location_id', 'outcome'), name='uniq_call_rollup_key',
                        nulls_distinct=False)]},
                ),
                migrations.CreateModel(
                    name='CallFieldRollupFolded',
                    fields=[*_key_fields(), *_FIELD_FIGURES],
                    options={'constraints': [models.UniqueConstraint(
                        fields=('organization', 'day', 'location_id', 'outcome', 'name'),
                        name='uniq_call_field_rollup_key', nulls_distinct=False)]},
                ),
            ],
        ),
        migrations.CreateModel(
            name='CallRollupDelta',
            fields=[*_key_fields(index=False), *_CALL_FIGURES],
            options={'indexes': [models.Index(fields=['organization', 'day'], name='call_rollup_delta_org_day')]},
        ),
        migrations.CreateModel(
            name='CallFieldRollupDelta',
            fields=[*_key_fields(index=False), *_FIELD_FIGURES],
            options={'indexes': [models.Index(fields=['organization', 'day'],
                                              name='call_fieldrollup_delta_org_day')]},
        ),
        migrations.RunSQL(SQL, REVERSE),
    ]
