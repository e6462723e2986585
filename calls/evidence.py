"""Evidence quotes of quality checks: the caps a completion must respect (calls/runtime/README.md), and where each
quote appears in the transcript, the marks the call page highlights.

The marks are computed once, when the completed call is stored (`Call.evidence_marks`), so showing a call only
reads them. Computing them is linear in the transcript: the turns are folded once (case and runs of whitespace
aside, as the verification compares them), each quote is one `str.find` scan of the folded text (no regex
backtracking), and the caps bound the quotes and their marks. A completion beyond the caps is refused at ingest; a
row stored before them (or written without marks) is searched for the quotes within the caps only.
"""

import bisect
import itertools
import re

MAX_QUOTES_PER_CHECK = 10
MAX_QUOTES_PER_CALL = 100
MAX_QUOTE_CHARS = 500
MARKS_PER_QUOTE = 20  # places a quote is marked at: evidence is quoted once or twice; more is a common phrase

# The folded turns are searched as one text joined by NUL: PostgreSQL's jsonb refuses \u0000, so no stored turn
# holds one, and a quote holding one is not searched, so no match spans two turns.
_SEPARATOR = "\x00"
_WHITESPACE = re.compile(r"\s{2,}|[^\S ]")  # a run of whitespace, except a lone space (already folded)
_LONG_RUNS = re.compile(r"\s{2,}")  # the runs folding shortens


def _fold(text: str) -> str:
    """Lowercase, every run of whitespace one space. Positions only move at runs of two or more (İ, whose
    lowercase is two characters, folds to i)."""
    return _WHITESPACE.sub(" ", text.replace("\u0130", "i").lower())


def fold_quote(text: str) -> str:
    """A quote or a turn as verification compares them: lowercase, every run of whitespace one space."""
    return _fold(text)


def _unfolding(text: str):
    """The function from a position in `_fold(text)` (not inside a folded run) to the same place in `text`."""
    folded_at, shift_after, shift = [], [], 0
    for run in _LONG_RUNS.finditer(text):
        folded_at.append(run.start() - shift)
        shift += len(run.group()) - 1
        shift_after.append(shift)

    def original(position: int) -> int:
        runs_before = bisect.bisect_left(folded_at, position)
        return position + (shift_after[runs_before - 1] if runs_before else 0)

    return original


def _quotes(checks: list[dict]) -> list[tuple[str, int]]:
    """(quote, check number from 1) within the caps, in the order of the checks and their evidence."""
    quotes = (
        (str(quote), number)
        for number, check in enumerate(checks, start=1)
        for quote in (check.get("evidence") or [])[:MAX_QUOTES_PER_CHECK]
    )
    return [(quote, number) for quote, number in itertools.islice(quotes, MAX_QUOTES_PER_CALL)
            if len(quote) <= MAX_QUOTE_CHARS]


def evidence_marks(transcript: list[dict], checks: list[dict]) -> list[list[list[int]]]:
    """For each turn of `transcript`, its marks `[start, end, check]`: where a quote of check number `check` (from
    1) appears in the turn's text, case and runs of whitespace aside, at most MARKS_PER_QUOTE places a quote.
    Sorted; where quotes overlap, the one that starts first (then the shorter, then the earlier check) wins."""
    texts = [str(turn.get("text", "")) for turn in transcript]
    folded = [_fold(text) for text in texts]
    joined = _SEPARATOR.join(folded)
    starts = [0, *itertools.accumulate(len(text) + len(_SEPARATOR) for text in folded[:-1])]
    found: dict[int, list[tuple[int, int, int]]] = {}
    searched = set()
    for quote, number in _quotes(checks):
        needle = _fold(quote).strip()
        # The same folded quote of a later check finds the same places, where the earlier check wins.
        if not needle or _SEPARATOR in needle or needle in searched:
            continue
        searched.add(needle)
        at = joined.find(needle)
        for _ in range(MARKS_PER_QUOTE):
            if at < 0:
                break
            turn = bisect.bisect_right(starts, at) - 1
            found.setdefault(turn, []).append((at - starts[turn], at - starts[turn] + len(needle), number))
            at = joined.find(needle, at + len(needle))
    marks: list[list[list[int]]] = [[] for _ in texts]
    for turn, spans in found.items():
        original = _unfolding(texts[turn])
        # A needle starts and ends on a non-space, so both ends map to characters of the original text.
        marks[turn] = _without_overlaps([(original(start), original(end - 1) + 1, check)
                                         for start, end, check in spans])
    return marks


def _without_overlaps(spans: list[tuple[int, int, int]]) -> list[list[int]]:
    marks, cursor = [], 0
    for start, end, check in sorted(spans):
        if start >= cursor:
            marks.append([start, end, check])
            cursor = end
    return marks
