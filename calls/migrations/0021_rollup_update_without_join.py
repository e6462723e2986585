"""The calls rollup's trigger pairs a bulk update's old and new rows without joining the two transition tables, and
its plans are generic from the first call.

0019's update branch joined old_rows to new_rows on `id` and filtered both by `= ANY(moved)`. PostgreSQL plans a
PL/pgSQL statement afresh for its first five executions in a session, then keeps a generic plan made for the rows it
was first planned with: a join planned for one row is a nested loop, and the fields check, an EXISTS over that join,
was a nested loop even when planned for thousands (EXISTS is costed for its first row). A bulk update ran in time
quadratic in its rows: a location's deletion moves all its calls in one statement (docs/benchmarks.md, 2026-11-28).
Now an update of more than one call pairs each call's old and new versions in a window over its id (one sorted pass):
a call whose counted figures differ between them takes its old figures out and puts its new ones in. No statement of
that branch joins or scans one transition table per row of the other, so a plan made for one row stays linear. An
update of one call, the runtime's writes, keeps 0019's statements: their join of two one-row tables compares the
versions once, where the window is read by four statements.

Generic plans from the first call (`plan_cache_mode`, for this function's statements only): each of the five planned
executions of a new connection took 22 entries in the shared lock table (planning opens every index of calls_booking
and calls_order), the same 22 in every writer of a busy organization.
"""

import importlib

from django.db import migrations

m0014 = importlib.import_module("calls.migrations.0014_call_rollup_trigger_cost")
m0017 = importlib.import_module("calls.migrations.0017_rollup_ignores_content")
m0019 = importlib.import_module("calls.migrations.0019_rollup_deltas")

_call, _field, _numbers, _IS_NUMBER = m0019._call, m0019._field, m0019._numbers, m0019._IS_NUMBER

# What the contributions read of a call, and what of it is counted (0017: number fields' values, the number of
# unanswered questions, the plain columns as they are).
_READ = ["id", *m0014._COUNTED]
_PLAIN_COUNTED = ", ".join(f"{{row}}.{col}" for col in m0017._PLAIN)
_COUNTED = (f"ROW({_PLAIN_COUNTED}, calls_counted_fields({{row}}.fields), "
            f"{m0017._count('{row}.unanswered_questions')})")


def _side(alias: str, table: str, sign: int) -> str:
    columns = ", ".join(f"{alias}.{col}" for col in _READ)
    return (f"SELECT {columns}, {sign} AS sign, {sign} AS side, {_COUNTED.format(row=alias)} AS counted "
            f"FROM {table} {alias}")


# Every row of the update, old (sign -1) and new (+1), with `moved`: whether its call's two versions count differently.
_PAIRED = f"""SELECT x.*, first_value(x.counted) OVER w IS DISTINCT FROM last_value(x.counted) OVER w AS moved
      FROM ({_side('o', 'old_rows', -1)} UNION ALL {_side('n', 'new_rows', 1)}) x
    WINDOW w AS (PARTITION BY x.id ORDER BY x.side ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)"""

# Inserts, deletes and an update of one call: 0019's statements as they were.
_INSERT_AND_DELETE = m0019.ON_CALL.split("BEGIN\n", 1)[1].split("    ELSE\n", 1)[0]
assert _INSERT_AND_DELETE.lstrip().startswith("IF TG_OP = 'INSERT' THEN")
_ONE_ROW = m0019.ON_CALL.split("    ELSE\n", 1)[1].split("    END IF;\n    RETURN NULL;", 1)[0].strip()
assert _ONE_ROW.startswith("SELECT array_agg(o.id) INTO moved")

ON_CALL = f"""
CREATE OR REPLACE FUNCTION calls_rollup_on_call() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    moved uuid[];
BEGIN
{_INSERT_AND_DELETE}    ELSIF (SELECT count(*) FROM new_rows) = 1 THEN
        {_ONE_ROW}
    ELSE
        IF NOT EXISTS (SELECT 1 FROM ({_PAIRED}) p WHERE p.moved) THEN
            RETURN NULL;
        END IF;
        {m0019._lock_orgs(f"SELECT DISTINCT p.organization_id FROM ({_PAIRED}) p WHERE p.moved")}
        {m0019._append(f"{_call('p', 'p.sign')} FROM ({_PAIRED}) p WHERE p.moved")}
        IF EXISTS (SELECT 1 FROM ({_PAIRED}) p WHERE p.moved AND p.fields <> '{{}}'::jsonb) THEN
            {m0019._append_fields(f"{_field('p', 'p.sign')} FROM ({_PAIRED}) p {_numbers('p')}"
                                  f" WHERE p.moved AND {_IS_NUMBER}")}
        END IF;
    END IF;
    RETURN NULL;
END $$;
"""


class Migration(migrations.Migration):

    dependencies = [("calls", "0020_call_content_kept_walk")]

    operations = [migrations.RunSQL(ON_CALL, m0019.ON_CALL)]
