"""List items that PostgreSQL builds as JSON text, so a page of 100 costs no per-row Python.

A list endpoint's item is `json_build_object(...)::text` over the row's columns, with timestamps formatted in SQL
exactly as `core.timefmt.iso_ms` writes them (UTC, milliseconds truncated, `Z`). Python then joins the page's
items into the envelope (api.renderers.RenderedPage) without decoding or encoding them. Each shape is
pinned, row for row, to the serializer that documents it (tests/api/test_list_items_sql.py), so they cannot drift.
"""

import functools
import re

from django.db import models
from django.db.models.expressions import RawSQL

# to_char truncates to the millisecond, as iso_ms does (isoformat(timespec="milliseconds")).
_ISO_MS = """to_char({} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"""
# A float as Python's json writes it: PostgreSQL writes a whole float8 as `1`, Python as `1.0`, so an item's `1`
# would read `1.0` in the same resource's detail. Both write the shortest exact digits otherwise; PostgreSQL turns
# to an exponent from 1e15, Python from 1e16, hence the bound (no listed float comes near it).
_FLOAT = "(CASE WHEN {0} = trunc({0}) AND abs({0}) < 1e15 THEN ({0}::text || '.0')::json ELSE to_json({0}) END)"


def column(model, name: str) -> str:
    """The qualified column of `model`'s field `name` (or attname), as the top-level query of its table names it."""
    return f'"{model._meta.db_table}"."{model._meta.get_field(name).column}"'


def reverse_one_to_one(model, related_model, value: str | None = None) -> str:
    """SQL for the row's reverse one-to-one `related_model`: whether it exists (no `value`), or its `value`
    column (NULL when it does not). One index probe a row on the unique key."""
    key = next(f for f in related_model._meta.concrete_fields if f.is_relation and f.related_model is model)
    table = related_model._meta.db_table
    where = f'"{table}"."{key.column}" = {column(model, model._meta.pk.name)}'
    if value is None:
        return f'EXISTS (SELECT 1 FROM "{table}" WHERE {where})'  # noqa: S608 - identifiers from model metadata
    return f'(SELECT "{table}"."{related_model._meta.get_field(value).column}" FROM "{table}" WHERE {where})'  # noqa: S608


def model_item(model, names, **sql) -> RawSQL:
    """`json_build_object('name', <value>, ...)::text` over a row of `model`, keys in the order of `names`: each a
    column (a timestamp written as iso_ms writes it, a float as Python writes it) unless `sql` gives its SQL
    (correlated to the row's table).

    Raw SQL built once, not an expression tree: compiling 20 Django expressions cost more than running the query.
    Keys are identifiers checked here; no value from a request ever reaches this text.
    """
    parts = []
    for name in names:
        if not re.fullmatch(r"[a-z_]+", name):
            raise ValueError(f"not an item key: {name!r}")
        if name in sql:
            value = sql[name]
        else:
            field = model._meta.get_field(name)
            value = column(model, name)
            if isinstance(field, models.DateTimeField):
                value = _ISO_MS.format(value)
            elif isinstance(field, models.FloatField):
                value = _FLOAT.format(value)
        parts.append(f"'{name}', {value}")
    if len(parts) > 50:
        raise ValueError("json_build_object takes at most 100 arguments")
    sql = f"json_build_object({', '.join(parts)})::text"
    return RawSQL(sql, (), output_field=models.TextField())  # noqa: S611 - model metadata and checked keys only


@functools.cache
def epoch_microseconds(model, name: str) -> RawSQL:
    """A timestamp column as whole microseconds since the Unix epoch (exact: extract is numeric). A cursor needs
    the last row's exact time; an integer costs neither to_char in PostgreSQL nor a datetime loader in Python."""
    sql = f"(extract(epoch FROM {column(model, name)}) * 1000000)::bigint"
    return RawSQL(sql, (), output_field=models.BigIntegerField())  # noqa: S611 - model metadata only
