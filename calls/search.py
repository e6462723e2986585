"""`q` of GET /v1/calls: PostgreSQL full-text search over the summary and the transcript (calls.search_vector,
a stored generated column with a GIN index, migration 0005). Every word must match (stemmed, English); "a quoted
phrase" matches those words in that order; a word ending in * matches as a prefix (`pepp*`). Each part of `q` is a
bound parameter of its own tsquery (Django's SearchQuery); the prefix word is reduced to letters and digits first,
so nothing a client types is read as tsquery syntax."""

import re
from functools import reduce

from django.contrib.postgres.search import SearchQuery, SearchVectorField
from django.db.models.expressions import RawSQL

MAX_LENGTH = 200
MAX_PARTS = 16
_PARTS = re.compile(r'"([^"]*)"|(\S+)')
_WORD = re.compile(r"\w+")
# The column exists only in the database (the model never writes it): read it as a constant expression.
SEARCH_VECTOR = RawSQL('"calls_call"."search_vector"', [], output_field=SearchVectorField())  # noqa: S611


def _query(phrase: str, word: str) -> SearchQuery | None:
    if phrase.strip():
        return SearchQuery(phrase, search_type="phrase", config="english")
    if word.endswith("*"):
        stem = "".join(_WORD.findall(word[:-1]))
        return SearchQuery(f"{stem}:*", search_type="raw", config="english") if stem else None
    return SearchQuery(word, search_type="plain", config="english") if word else None


def query(q: str) -> SearchQuery | None:
    """Every part of `q`, and-ed; None when nothing in it is searchable."""
    parts = [p for p in (_query(phrase, word) for phrase, word in _PARTS.findall(q)[:MAX_PARTS]) if p is not None]
    return reduce(lambda a, b: a & b, parts) if parts else None


def matching(calls, q: str):
    """`calls` narrowed to those whose text matches `q` (none when `q` has nothing searchable)."""
    search = query(q)
    if search is None:
        return calls.none()
    return calls.annotate(search_vector=SEARCH_VECTOR).filter(search_vector=search)
