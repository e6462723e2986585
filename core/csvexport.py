"""CSV downloads streamed in keyset pages: memory stays flat whatever the number of rows, the first lines leave after
the first page, no transaction stays open while the client reads (`_pages` says why), and every cell is safe to open
in a spreadsheet.

A kind of export is a queryset and its `Column`s (each app keeps its kinds' columns beside it); `csv_response`
turns them into a `StreamingHttpResponse` of UTF-8 CSV with a header row.

A download holds a sync web worker for as long as it lasts (a million rows take minutes), so no tenant may hold
many: an export needs a place in two semaphores every process shares through Redis, its organization's
(EXPORTS_PER_ORG_AT_ONCE, 1, fleet-wide) and its node's (one of the node's web workers in four, at least 1, keyed
by NODE_ID; once half of them are held, the rest only for organizations that exported in none of the last
PLACES_FAIR_SHARE_SECONDS: docs/api.md#exports), taken before the query runs and
given back when the download ends, is closed (a client gone mid-download) or is never read. A download outlasts any
fixed expiry, so its places expire EXPORT_PLACE_TTL_SECONDS after its last progress: each chunk sent renews them (at
most every few seconds), and a download stuck on a client that stops reading frees them (as WEB_TIMEOUT ends its
worker, core/liveness.py). Without a place, or without Redis (no process can count them alone), nothing is queried
and the caller answers 429 with Retry-After.
"""

import csv
import json
import math
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import connections, transaction
from django.db.models import Expression, F, Field, Func, OrderBy, Q, Value
from django.db.models.lookups import GreaterThan, LessThan
from django.http import StreamingHttpResponse

from core import counters, liveness

CHUNK_SIZE = 2000  # rows per page read (one short query each) after the first row, and per chunk written
# A download renews its places at most this often (one Redis round trip), and never less often than a third of
# their expiry.
RENEW_EVERY_SECONDS = 5.0
# What Retry-After says when every place is taken: a download may end at any moment and nothing tells when, so a
# few seconds, never longer than the earliest place's expiry (a holder that died).
RETRY_AFTER_MAX_SECONDS = 10
# OWASP "CSV Injection": a cell starting with one of these is read as a formula (or DDE) by Excel, LibreOffice and
# Google Sheets, which also take the full-width (and small) forms of = + - @ that East Asian input methods type,
# and skip leading whitespace before one; a line break or tab first starts a formula on the next line of a cell.
# A leading apostrophe makes them show it as text.
FORMULA_STARTS = frozenset("=+-@\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b")
CONTROL_STARTS = frozenset("\t\r\n")


def _formula_like(text: str) -> bool:
    return bool(text) and (text[0] in CONTROL_STARTS or text.lstrip()[:1] in FORMULA_STARTS)


def spreadsheet_safe(text: str) -> str:
    return f"'{text}" if _formula_like(text) else text


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
    return f"'{value}" if _formula_like(value) else value


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


def csv_lines(rows, columns: Iterable[Column], *, tz: tzinfo = UTC, chunk_size: int | None = None) -> Iterator[str]:
    """The header, then `rows` (a queryset, in its own order) as CSV text: the header and the first row, then a
    chunk of `chunk_size` rows at a time.

    The rows are read in keyset pages (`_pages`), each its own short query and transaction, so nothing is held
    between chunks while the client reads. The first page's query runs on the first `next()`, so an error in it
    raises there (before a response has started) rather than truncating a 200. Timestamps are written in Python: a
    session TimeZone set for PostgreSQL to write them would make Django read every other timestamp wrong.
    """
    chunk_size = chunk_size or export_chunk_size()
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

    def line(row) -> str:
        return writer.writerow([
            cell(render(value) if render else value, tz)
            for value, render in zip([row[position] for position in positions], renders, strict=True)
        ])

    pages = _pages(rows.annotate(**expressions), lookups, chunk_size, line)
    first = next(pages)  # the first page's query runs here
    yield writer.writerow([c.name for c in columns]) + "".join(first)
    for page in pages:
        if page:
            liveness.beat()
            yield "".join(page)


def export_chunk_size() -> int:
    """Rows per page read and per chunk written: CHUNK_SIZE, or the EXPORT_CHUNK_SIZE setting (tests make it small
    to cross page boundaries with a few rows)."""
    return int(getattr(settings, "EXPORT_CHUNK_SIZE", None) or CHUNK_SIZE)


def keyset(rows) -> list[tuple[str, bool]]:
    """`rows`' order as (lookup, descending) pairs ending in a unique, non-null column of the model: its own order
    up to its first such column, and `pk` after the others (in the last one's direction, as an index on the order
    ends) when it has none. A page continues strictly after the previous page's last row in this order, so every
    key must be non-null (a NULL compares as nothing) and the last must tell any two rows apart."""
    meta = rows.model._meta
    order = rows.query.order_by or (meta.ordering if rows.query.default_ordering else ())
    keys = []
    for item in order:
        if isinstance(item, str) and item and item != "?":
            lookup, descending = item.lstrip("-"), item.startswith("-")
        elif isinstance(item, OrderBy) and isinstance(item.expression, F):
            lookup, descending = item.expression.name, item.descending
        else:
            raise ValueError(f"An export orders by fields, not {item!r}.")
        field = _non_null_field(meta, lookup)
        keys.append((lookup, descending))
        if "__" not in lookup and field.unique:
            return keys
    return [*keys, ("pk", keys[-1][1] if keys else True)]


def _non_null_field(meta, lookup: str):
    """The field `lookup` names from `meta`, or ValueError if it may be NULL (itself, or a relation on its way)."""
    *path, last = lookup.split("__")
    for part in path:
        field = meta.get_field(part)
        if not field.is_relation or field.null:
            raise ValueError(f"An export cannot page by {lookup!r}: it may be null.")
        meta = field.related_model._meta
    field = meta.pk if last == "pk" else meta.get_field(last)
    if field.null:
        raise ValueError(f"An export cannot page by {lookup!r}: it may be null.")
    if field.is_relation and field.name == last:  # Django would order by the related model's own ordering
        raise ValueError(f"An export pages by columns: {lookup}_id, not {lookup!r}.")
    return field


def _after(keys: list[tuple[str, bool]], last: tuple):
    """The rows strictly after `last` (the values of `keys`) in the order of `keys`. One direction: a row-value
    comparison, which an index on the order answers as a bound (ties on the time field cost nothing). Mixed: the
    expanded form, with its first key's bound repeated for the index."""
    if len({descending for _, descending in keys}) == 1:
        compare = LessThan if keys[0][1] else GreaterThan
        return compare(Func(*(F(lookup) for lookup, _ in keys), function="ROW", output_field=Field()),
                       Func(*(Value(value) for value in last), function="ROW", output_field=Field()))
    after = Q()
    for i, (lookup, descending) in reversed(list(enumerate(keys))):
        strictly = Q(**{f"{lookup}__{'lt' if descending else 'gt'}": last[i]})
        after = strictly if i == len(keys) - 1 else strictly | (Q(**{lookup: last[i]}) & after)
    first, descending = keys[0]
    return Q(**{f"{first}__{'lte' if descending else 'gte'}": last[0]}) & after


def _pages(rows, lookups: list, chunk_size: int, line: Callable[[tuple], str]) -> Iterator[list[str]]:
    """`rows`' `lookups` (a `values_list`) in `keyset(rows)` order, each page's rows written by `line`: the first page
    of one row (the time to the first byte), then pages of `chunk_size` rows.

    Why pages and not one cursor: a transaction (or a server-side cursor) left open while the client reads keeps
    its snapshot, and PostgreSQL can then prune no row version deleted since it began, in any table of the database
    (the xmin horizon is per database): every organization's webhook claim then walks every queue entry that died
    since the download began, slower the older the snapshot (docs/benchmarks.md#figures-behind-the-code). Each page
    is its own transaction, which reads its rows from a cursor (not WITH HOLD: inside the transaction) and writes
    them as they come (row objects held by the thousand cost more CPU), and ends before its lines go to the client:
    tens of milliseconds, whatever the client does. So each page is read as of its own moment: a row inserted or
    changed during the download may or may not appear, and a row that exists throughout appears exactly once. (An
    export run inside a caller's transaction reads as of the caller's snapshot: nothing here can end it.)

    `SET LOCAL jit = off` for each page's query: PostgreSQL JIT-compiles a plan it costs high (a million-row
    export's took a noticeable part of the first byte's time); the per-row work here gains nothing from it.
    """
    keys = keyset(rows)
    # The last row's keys, from the columns when they are ones (a call's id and started_at): a key read again would
    # cost a value to load on every row (a timestamp's is ~1/10 of the row's time), for the one row a page needs.
    pk = rows.model._meta.pk.name
    named = [pk if lookup == "pk" else lookup for lookup in lookups]
    extra = [lookup for lookup, _ in keys if (pk if lookup == "pk" else lookup) not in named]
    at = [len(lookups) + extra.index(lookup) if lookup in extra else named.index(pk if lookup == "pk" else lookup)
          for lookup, _ in keys]
    values = rows.order_by(*(f"-{lookup}" if descending else lookup for lookup, descending in keys)).annotate(
        **{f"export_key_{k}": F(lookup) for k, lookup in enumerate(extra)}
    ).values_list(*lookups, *(f"export_key_{k}" for k in range(len(extra))))
    page, size = values, 1
    while True:
        lines, last = [], None
        with transaction.atomic(using=rows.db):
            with connections[rows.db].cursor() as cursor:
                cursor.execute("SET LOCAL jit = off")
            for last in page[:size].iterator(chunk_size=size):
                lines.append(line(last))
        yield lines
        if len(lines) < size:
            return
        page, size = values.filter(_after(keys, [last[i] for i in at])), chunk_size


class ExportsBusy(Exception):
    """No place for an export now: `scope` is "organization" (its own export is running), "all" (one web worker
    in four of this node is exporting) or "share" (more than half of them are, and this organization exported in
    the last PLACES_FAIR_SHARE_SECONDS: the rest is kept for the others); `wait` is the whole seconds (at least 1)
    after which to try again."""

    def __init__(self, wait: int, scope: str):
        super().__init__(f"{scope} exports at once")
        self.wait, self.scope = wait, scope


def exports_at_once() -> int:
    """How many exports this node may run at once: one of its web workers in four, at least 1."""
    return max(1, int(settings.WEB_WORKERS) // 4)


def place_ttl() -> float:
    return float(settings.EXPORT_PLACE_TTL_SECONDS)


def export_slots(org_id) -> list[tuple[str, int]]:
    """The organization's semaphore, fleet-wide (its cap holds whichever nodes serve it), then this node's (a
    quarter of its own workers, whatever the number of nodes)."""
    return [(f"exports:fleet:org:{org_id}", max(1, int(settings.EXPORTS_PER_ORG_AT_ONCE))),
            (f"exports:node:{settings.NODE_ID}", exports_at_once())]


def export_share(org_id) -> counters.Share:
    """The fair share of the node's places: organizations that exported lately, fleet-wide."""
    return counters.Share("exports:fleet:recent", str(org_id), float(settings.PLACES_FAIR_SHARE_SECONDS))


class Places:
    """An export's places (`take_places`): renewed as the download makes progress, given back once."""

    def __init__(self, names: list[str], holder: str, ttl: float, share: counters.Share | None = None):
        self.names, self.holder, self.ttl, self.share = names, holder, ttl, share
        self.every = min(RENEW_EVERY_SECONDS, ttl / 3)
        self.renewed_at = time.monotonic()
        self.released = False

    def renew(self) -> None:
        now = time.monotonic()
        if not self.released and now - self.renewed_at >= self.every:
            self.renewed_at = now
            counters.renew_slots(self.names, self.holder, ttl=self.ttl)

    def release(self) -> None:
        if not self.released:
            self.released = True
            counters.release_slots(self.names, self.holder, share=self.share)


def busy_scope(busy: counters.SlotsBusy) -> str:
    """What a refusal of `take_slots` for a tenant's and a node's semaphore was about (ExportsBusy's scopes)."""
    if busy.name is None:
        return "all"
    if busy.fair_share:
        return "share"
    return "organization" if ":org:" in busy.name else "all"


def take_places(org_id) -> Places:
    """A place in the organization's and in this node's export semaphores (with the node's fair share), or
    ExportsBusy (Redis unreachable included: a process cannot count them alone)."""
    slots, ttl, share = export_slots(org_id), place_ttl(), export_share(org_id)
    try:
        holder = counters.take_slots(slots, ttl=ttl, share=share)
    except counters.SlotsBusy as busy:
        wait = min(busy.expires_in, RETRY_AFTER_MAX_SECONDS) if busy.name else busy.expires_in
        raise ExportsBusy(max(1, math.ceil(wait)), busy_scope(busy)) from None
    return Places([name for name, _ in slots], holder, ttl, share)


class _Download:
    """The response's content: `first`, then `rest`, renewing `places` as chunks leave and giving them back when the
    rows end. Not a generator: its close() (a client gone mid-download, or a response never read, whose generator
    would never have started) must give the places back too, and closes `rest`."""

    def __init__(self, first: str, rest: Iterator[str], places: Places):
        self.first, self.rest, self.places = first, rest, places

    def __iter__(self):
        return self

    def __next__(self) -> str:
        if self.first is not None:
            chunk, self.first = self.first, None
            return chunk
        try:
            chunk = next(self.rest)
        except BaseException:  # the end of the rows, or an error in them: the download is over either way
            self.places.release()
            raise
        self.places.renew()
        return chunk

    def close(self) -> None:
        try:
            self.rest.close()
        finally:
            self.places.release()


def csv_response(rows, columns: Iterable[Column], *, org, filename: str, tz: tzinfo = UTC) -> StreamingHttpResponse:
    """A download of `rows` as `filename`, counted against `org`'s export places: ExportsBusy, before anything is
    queried, when it has none. The first page's query runs before the response starts: see `csv_lines`."""
    places = take_places(org.pk)
    try:
        lines = csv_lines(rows, columns, tz=tz)
        first = next(lines)
    except BaseException:
        places.release()
        raise
    response = StreamingHttpResponse(_Download(first, lines, places), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
