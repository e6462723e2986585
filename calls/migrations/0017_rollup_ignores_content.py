"""The calls rollup's trigger compares what it counts, not the columns that hold it: a change to a call's `fields` that
leaves every number field's value as it was (a deleted quote: calls.services.content), or to `unanswered_questions`
that keeps their number, is no change to the figures, so deleting a call's content never moves analytics (not even
by a float's last bit, which subtracting and adding a sum back could)."""

import importlib

from django.db import migrations

previous = importlib.import_module("calls.migrations.0014_call_rollup_trigger_cost")

COUNTED_FIELDS = """
CREATE OR REPLACE FUNCTION calls_counted_fields(fields jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(jsonb_object_agg(f.key, f.value -> 'value'), '{}'::jsonb)
      FROM jsonb_each(CASE WHEN jsonb_typeof(fields) = 'object' THEN fields ELSE '{}'::jsonb END) f
     WHERE f.value ->> 'type' = 'number' AND jsonb_typeof(f.value -> 'value') = 'number'
$$;
"""


def _count(column: str) -> str:
    return f"CASE WHEN jsonb_typeof({column}) = 'array' THEN jsonb_array_length({column}) ELSE 0 END"


_PLAIN = [col for col in previous._COUNTED if col not in ("fields", "unanswered_questions")]
_CHANGED = " OR ".join(
    [f"n.{col} IS DISTINCT FROM o.{col}" for col in _PLAIN]
    + ["calls_counted_fields(n.fields) IS DISTINCT FROM calls_counted_fields(o.fields)",
       f"{_count('n.unanswered_questions')} IS DISTINCT FROM {_count('o.unanswered_questions')}"]
)

ON_CALL = previous.ON_CALL.replace(previous._CHANGED, f"({_CHANGED})")
assert ON_CALL != previous.ON_CALL


class Migration(migrations.Migration):

    dependencies = [
        ('calls', '0016_call_content_deleted'),
    ]

    operations = [
        migrations.RunSQL(COUNTED_FIELDS + ON_CALL, previous.ON_CALL + "DROP FUNCTION calls_counted_fields(jsonb);"),
    ]
