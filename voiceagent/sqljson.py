"""List items that PostgreSQL builds as JSON text, so a page of 100 costs no per-row Python.

A list endpoint's item is `json_build_object(...)::text` over the row's columns, with timestamps formatted in SQL
exactly as `voiceagent.timefmt.iso_ms` writes them (UTC, milliseconds truncated, `Z`). Python then joins the page's
items into the envelope (voiceagent.api.renderers.RenderedPage) without decoding or encoding them. Each shape is
pinned, row for row, to the serializer that documents it (tests/api/test_list_items_sql.py), so they cannot drift.
"""

from django.db import models
from django.db.models import F, Func, Value


class IsoMs(Func):
    """A timestamp as the API writes it: `2026-01-02T03:04:05.123Z` (NULL stays NULL)."""

    template = """to_char(%(expressions)s AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"""
    output_field = models.TextField()


class CursorTime(Func):
    """A timestamp to the microsecond, as `datetime.fromisoformat` reads it back (the cursor's `t`)."""

    template = """to_char(%(expressions)s AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')"""
    output_field = models.TextField()


class JsonItem(Func):
    """`{"name": expression, ...}` as JSON text, keys in the given order."""

    function = "json_build_object"
    template = "%(function)s(%(expressions)s)::text"
    output_field = models.TextField()

    def __init__(self, fields: dict):
        arguments = []
        for name, expression in fields.items():
            arguments += [Value(name), expression]
        super().__init__(*arguments)


def model_item(model, names, **expressions) -> JsonItem:
    """The item of `names`, each a column of `model` (timestamps as `IsoMs`) unless given in `expressions`."""
    fields = {}
    for name in names:
        if name in expressions:
            fields[name] = expressions[name]
            continue
        field = model._meta.get_field(name)
        fields[name] = IsoMs(field.attname) if isinstance(field, models.DateTimeField) else F(field.attname)
    return JsonItem(fields)
