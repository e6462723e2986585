"""The one JSON reader for request input (the API parsers, the dashboard's JSON fields): `json.loads` with a
nesting cap and a length cap on number literals (docs/api.md#limits).

Python's decoder recurses once per level, so `'[' * 200000` raises RecursionError, which no caller expects (a
500 and a trace in the log). A value that parses just under the interpreter's limit can still blow it later, in
a serializer, an encoder or a renderer that recurses from deeper in the stack; a cap far below the limit keeps
every later recursive walk safe. Both cases are a ValueError here, as any other malformed JSON is.
"""

import json
import re

from core import numbers

MAX_DEPTH = 64  # arrays and objects inside each other; the deepest body we document (a meeting ingest) has 6
TOO_DEEP = f"Arrays and objects may be nested at most {MAX_DEPTH} deep."


class TooDeep(ValueError):
    def __init__(self):
        super().__init__(TOO_DEEP)


# A run this long of what number literals are made of: only then may a literal be over the cap, and only then do
# the literals go through Python (json's C scanner converts them itself otherwise).
_LONG_NUMBER_RUN = re.compile(rf"[-+.eE0-9]{{{numbers.MAX_CHARS + 1}}}")


def loads(text: str, **kwargs):
    """`json.loads(text, **kwargs)`, or ValueError (TooDeep beyond MAX_DEPTH levels of arrays and objects, a
    number literal over `numbers.MAX_CHARS` characters: core/numbers.py)."""
    if _LONG_NUMBER_RUN.search(text):
        kwargs = {"parse_int": numbers.json_int, "parse_float": numbers.json_float, **kwargs}
    try:
        value = json.loads(text, **kwargs)
    except RecursionError:
        raise TooDeep() from None
    # Fewer brackets than the cap cannot nest beyond it: most bodies skip the walk (str.count runs in C).
    if text.count("[") + text.count("{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        raise TooDeep()
    return value


def _deeper_than(value, limit: int) -> bool:
    """Whether arrays and objects nest more than `limit` deep in `value`: level by level (no recursion), linear."""
    level = [value] if isinstance(value, (list, dict)) else []
    for _ in range(limit):
        level = [child for node in level for child in (node.values() if isinstance(node, dict) else node)
                 if isinstance(child, (list, dict))]
        if not level:
            return False
    return True
