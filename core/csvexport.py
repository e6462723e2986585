"""CSV downloads streamed from a server-side cursor: memory stays flat whatever the number of rows, the first lines
leave before the query has finished, and every cell is safe to open in a spreadsheet.

A kind of export is a queryset and its `Column`s (each app keeps its kinds' columns beside it); `csv_response`
turns them into a `StreamingHttpResponse` of UTF-8 CSV with a header row.
"""

import csv
import itertools
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.db import connections, transaction
from django.db.models import Expression
from django.http import StreamingHttpResponse

from core import liveness

CHUNK_SIZE = 2000  # rows per FETCH from the server-side cursor, and per chunk written to the client
# OWASP "CSV Injection": a cell starting with one of these is read as a formula (or DDE) by Excel, LibreOffice and
# Google Sheets; a leading apostrophe makes them show it as text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    return f"'{text}" if text[:1] in FORMULA_STARTS else text


@dataclass(frozen=True)
class Column:
    """One column: its header `name`, where its value comes from (`source`: a `values_list` lookup, the name by
    default, an expression correlated to the row, or a tuple of those, whose values `render` then gets as a tuple)
    and an optional `render(value)` before the cell is written."""

    name: str
    source: str | Expression | tuple | None = None
    render: Callable[[Any], Any] | None = None


_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _text(value: str, tz) -> str:
    return f"'{value}" if value[:1] in FORMULA_STARTS else value


# By exact type, one dict lookup a cell (a million rows of twenty cells make the isinstance chain below count).
_WRITERS = {
    str: _text,
    type(None): lambda value, tz: "",
    bool: lambda value, tz: "true" if value else "false",
    int: lambda value, tz: str(value),
    float: lambda value, tz: repr(value),
    Decimal: lambda value, tz: str(value),
    datetime: lambda value, tz: value.astimezone(tz).isoformat(timespec="milliseconds"),
    date: lambda value, tz: value.isoformat(),
    UUID: lambda value, tz: str(value),
    list: lambda value, tz: _text(_json(value), tz),
    dict: lambda value, tz: _text(_json(value), tz),
}


def cell(value, tz: tzinfo = UTC) -> str:
    """A value as CSV text: nothing for null, `true`/`false`, ISO 8601 timestamps with their offset (in `tz`,
    milliseconds), numbers as they are, lists and objects as JSON, and text made spreadsheet-safe.

    Only text is escaped: a number or a timestamp written here cannot start a formula, and a negative amount should
    stay a number in the spreadsheet."""
    writer = _WRITERS.get(type(value))
    if writer is not None:
        return writer(value, tz)
    for kind, writer in _WRITERS.items():  # a subclass (an enum's str, a date's datetime)
        if isinstance(value, kind) and kind is not bool:
            return writer(value, tz)
    return _text(str(value), tz)


class _Echo:
    """csv.writer's file: hands each written line back instead of keeping it."""

    def write(self, value):
        return value


def csv_lines(rows, columns: Iterable[Column], *, tz: tzinfo = UTC, chunk_size: int = CHUNK_SIZE) -> Iterator[str]:
    """The header, then `rows` (a queryset, in its own order) as CSV text, a chunk of rows at a time.

    The query runs on the first `next()`, so an error in it raises there (before a response has started) rather
    than truncating a 200. The rows come from a server-side cursor inside a transaction: outside one, Django
    declares the cursor WITH HOLD, and PostgreSQL then materializes the whole result when the DECLARE commits,
    so the first row would wait for the last. `SET LOCAL jit = off` ends with that transaction (with a caller's,
    when the export runs inside one). Timestamps are written in Python: a session TimeZone set for PostgreSQL to
    write them would make Django read every other timestamp of that transaction wrong.
    """
    columns = list(columns)
    expressions, lookups, positions = {}, [], []
    for i, column in enumerate(columns):
        sources = column.source if isinstance(column.source, tuple) else (column.source or column.name,)
        start = len(lookups)
        for j, source in enumerate(sources):
            if isinstance(source, Expression):
                expressions[f"export_{i}_{j}"] = source
                source = f"export_{i}_{j}"
            lookups.append(source)
        positions.append(slice(start, len(lookups)) if isinstance(column.source, tuple) else start)
    renders = [c.render for c in columns]
    writer = csv.writer(_Echo())
    with transaction.atomic(using=rows.db):
        with connections[rows.db].cursor() as cursor:
            # PostgreSQL would JIT-compile a plan costed at a million rows before its first row leaves (measured:
            # most of a second-long first byte); the per-row work here is too slight to gain anything from it.
            cursor.execute("SET LOCAL jit = off")
        values = rows.annotate(**expressions).values_list(*lookups).iterator(chunk_size=chunk_size)
        try:
            first = list(itertools.islice(values, 1))  # the query runs here
            batch, flush_at = [writer.writerow([c.name for c in columns])], 2
            for row in itertools.chain(first, values):
                values_of_row = [row[position] for position in positions]
                batch.append(writer.writerow([
                    cell(render(value) if render else value, tz)
                    for value, render in zip(values_of_row, renders, strict=True)
                ]))
                # The header and the first row leave at once (the time to the first byte), then whole chunks.
                if len(batch) >= flush_at:
                    liveness.beat()
                    yield "".join(batch)
                    batch, flush_at = [], chunk_size
            if batch:
                yield "".join(batch)
        finally:
            values.close()  # the cursor, while its transaction lasts (a client gone mid-download included)


def _started(first: str, rest: Iterator[str]) -> Iterator[str]:
    """`first`, then `rest`, as a generator: its close() (a client gone mid-download) closes `rest`, ending its
    transaction before the request's end closes the connection."""
    yield first
    yield from rest


def csv_response(rows, columns: Iterable[Column], *, filename: str, tz: tzinfo = UTC) -> StreamingHttpResponse:
    """A download of `rows` as `filename`. The query runs before the response starts: see `csv_lines`."""
    lines = csv_lines(rows, columns, tz=tz)
    response = StreamingHttpResponse(_started(next(lines), lines), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
