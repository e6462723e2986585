"""The strict shape of a meeting outcome (schema_version 1), checked wherever an outcome enters or changes:
the runtime's ingestion and an admin's edit. Errors carry dotted paths (`tickets.0.title`):
the dashboard shows them beside the field they concern, the API names their top-level field (api.errors).

Rules (docs/api.md#limits caps: names and titles 200, free text 5,000):
- summary: 2 to 5 sentences, at most 5,000 characters. A sentence ends with `.`, `!` or `?` followed by
  whitespace or the end; common abbreviations ("e.g.", "Mr.") and decimals do not end one.
- tickets (<= 50): title (1..200), description (1..5,000), acceptance_criteria (<= 50 strings of 1..5,000),
  file_refs (<= 50 of {repo 1..200, path 1..1,000}), confidence (a number from 0 to 1), assumptions (<= 50
  strings of 1..5,000), provenance (1..5,000: where in the meeting the ticket comes from).
- decisions (<= 100) {decision 1..5,000, context 0..5,000}; open_questions (<= 100) {question, context} alike.
- action_items (<= 100) {who 1..200, what 1..5,000, due: null or a date "YYYY-MM-DD"}.
- schema_version: the integer 1. Unknown keys anywhere are refused.
"""

import math
import re
from datetime import date

from core.errors import ValidationFailed

SUPPORTED_SCHEMA_VERSIONS = (1,)
TEXT = 5000
NAME = 200
OUTCOME_FIELDS = ("summary", "tickets", "decisions", "open_questions", "action_items", "schema_version")
LIST_CAPS = {"tickets": 50, "decisions": 100, "open_questions": 100, "action_items": 100}
ITEM_CAP = 50  # acceptance_criteria, file_refs, assumptions of one ticket

_ABBREVIATIONS = re.compile(r"\b(?:e\.g|i\.e|etc|vs|Mr|Mrs|Ms|Dr|Prof|Inc|Ltd|Jr|Sr|approx|No)\.", re.IGNORECASE)
# Linear: a run of terminators is tried once, from its first character (the lookbehind), and never given back
# (possessive), so "." * 5000 + "x" costs 5,000 steps, not 12.5 million; the matches are the same as with plain `+`.
_SENTENCE_END = re.compile(r"(?<![.!?])[.!?]++[\"')\]]*+(?=\s|$)")


def count_sentences(text: str) -> int:
    """Sentences in `text`: runs ending in ., ! or ? before whitespace or the end (a trailing fragment without
    punctuation counts as one more). Abbreviations from a short list are not ends."""
    cleaned = _ABBREVIATIONS.sub(lambda m: m.group(0)[:-1], text.strip())
    if not cleaned:
        return 0
    ends = list(_SENTENCE_END.finditer(cleaned))
    count = len(ends)
    tail = cleaned[ends[-1].end():] if ends else cleaned
    return count + (1 if tail.strip() else 0)


class _Errors:
    def __init__(self):
        self.fields: dict[str, list[str]] = {}
        self.form: list[str] = []

    def add(self, path: str, message: str) -> None:
        if path:
            self.fields.setdefault(path, []).append(message)
        else:
            self.form.append(message)

    def raise_if_any(self) -> None:
        if self.fields or self.form:
            raise ValidationFailed(field_errors=self.fields, form_errors=self.form)


def _unknown_keys(value: dict, allowed, path: str, errors: _Errors) -> None:
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        where = f" at {path}" if path else ""
        errors.add("", f"Unrecognized key(s) in object{where}: {', '.join(repr(k) for k in unknown)}")


def _text(value, path: str, errors: _Errors, *, cap: int = TEXT, required: bool = True):
    if not isinstance(value, str):
        errors.add(path, "Expected a string.")
        return None
    value = value.strip()
    if required and not value:
        errors.add(path, "This field may not be blank.")
    elif len(value) > cap:
        errors.add(path, f"Ensure this field has no more than {cap} characters.")
    return value


def _list(value, path: str, errors: _Errors, cap: int):
    if not isinstance(value, list):
        errors.add(path, "Expected an array.")
        return []
    if len(value) > cap:
        errors.add(path, f"Ensure this field has no more than {cap} elements.")
        return []
    return value


def _object(value, fields: tuple[str, ...], path: str, errors: _Errors, optional: tuple[str, ...] = ()):
    if not isinstance(value, dict):
        errors.add(path, "Expected an object.")
        return None
    _unknown_keys(value, fields, path, errors)
    for name in fields:
        if name not in value and name not in optional:
            errors.add(f"{path}.{name}", "This field is required.")
    return value


def _strings(value, path: str, errors: _Errors) -> list[str]:
    return [_text(item, f"{path}.{i}", errors) for i, item in enumerate(_list(value, path, errors, ITEM_CAP))]


TICKET_FIELDS = ("title", "description", "acceptance_criteria", "file_refs", "confidence", "assumptions", "provenance")


def _get(obj: dict, name: str, path: str, errors: _Errors, check, **kwargs):
    """`check(obj[name])` at `path.name`; None when the key is missing (already reported by _object)."""
    return check(obj[name], f"{path}.{name}", errors, **kwargs) if name in obj else None


def _confidence(value, path: str, errors: _Errors):
    # bool is an int in Python; `true` is not a confidence.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        errors.add(path, "Expected a number.")
    elif not 0 <= value <= 1:
        errors.add(path, "Ensure this value is between 0 and 1.")
    else:
        return float(value)
    return None


def _file_refs(value, path: str, errors: _Errors) -> list[dict]:
    out = []
    for i, ref in enumerate(_list(value, path, errors, ITEM_CAP)):
        ref = _object(ref, ("repo", "path"), f"{path}.{i}", errors)
        if ref is not None:
            out.append({
                "repo": _get(ref, "repo", f"{path}.{i}", errors, _text, cap=NAME),
                "path": _get(ref, "path", f"{path}.{i}", errors, _text, cap=1000),
            })
    return out


def _ticket(value, path: str, errors: _Errors):
    ticket = _object(value, TICKET_FIELDS, path, errors)
    if ticket is None:
        return None
    return {
        "title": _get(ticket, "title", path, errors, _text, cap=NAME),
        "description": _get(ticket, "description", path, errors, _text),
        "acceptance_criteria": _get(ticket, "acceptance_criteria", path, errors, _strings),
        "file_refs": _get(ticket, "file_refs", path, errors, _file_refs),
        "confidence": _get(ticket, "confidence", path, errors, _confidence),
        "assumptions": _get(ticket, "assumptions", path, errors, _strings),
        "provenance": _get(ticket, "provenance", path, errors, _text),
    }


def _pairs(value, path: str, errors: _Errors, key: str, cap: int) -> list[dict]:
    out = []
    for i, item in enumerate(_list(value, path, errors, cap)):
        item = _object(item, (key, "context"), f"{path}.{i}", errors)
        if item is not None:
            out.append({
                key: _get(item, key, f"{path}.{i}", errors, _text),
                "context": _get(item, "context", f"{path}.{i}", errors, _text, required=False),
            })
    return out


def _due(value, path: str, errors: _Errors):
    if value is None:
        return None
    try:
        if isinstance(value, str) and len(value) == 10:
            return date.fromisoformat(value).isoformat()
    except ValueError:
        pass
    errors.add(path, "Expected null or a date (YYYY-MM-DD).")
    return None


def _action_items(value, path: str, errors: _Errors) -> list[dict]:
    out = []
    for i, item in enumerate(_list(value, path, errors, LIST_CAPS["action_items"])):
        item = _object(item, ("who", "what", "due"), f"{path}.{i}", errors)
        if item is not None:
            out.append({
                "who": _get(item, "who", f"{path}.{i}", errors, _text, cap=NAME),
                "what": _get(item, "what", f"{path}.{i}", errors, _text),
                "due": _get(item, "due", f"{path}.{i}", errors, _due),
            })
    return out


def clean_outcome(value) -> dict:
    """The outcome normalized (strings stripped, confidence a float, due a date string), or ValidationFailed
    listing every problem at once."""
    errors = _Errors()
    outcome = _object(value, OUTCOME_FIELDS, "", errors)
    if outcome is None:
        errors.raise_if_any()
    # _object reports missing keys as ".name"; the top level has no prefix.
    errors.fields = {key.lstrip("."): messages for key, messages in errors.fields.items()}
    cleaned: dict = {}
    if "summary" in outcome:
        summary = _text(outcome["summary"], "summary", errors)
        if summary and len(summary) <= TEXT and not 2 <= count_sentences(summary) <= 5:
            errors.add("summary", f"The summary must have 2 to 5 sentences (it has {count_sentences(summary)}).")
        cleaned["summary"] = summary
    if "tickets" in outcome:
        cleaned["tickets"] = [
            _ticket(ticket, f"tickets.{i}", errors)
            for i, ticket in enumerate(_list(outcome["tickets"], "tickets", errors, LIST_CAPS["tickets"]))
        ]
    if "decisions" in outcome:
        cleaned["decisions"] = _pairs(outcome["decisions"], "decisions", errors, "decision", LIST_CAPS["decisions"])
    if "open_questions" in outcome:
        cleaned["open_questions"] = _pairs(
            outcome["open_questions"], "open_questions", errors, "question", LIST_CAPS["open_questions"]
        )
    if "action_items" in outcome:
        cleaned["action_items"] = _action_items(outcome["action_items"], "action_items", errors)
    if "schema_version" in outcome:
        version = outcome["schema_version"]
        if isinstance(version, bool) or not isinstance(version, int) or version not in SUPPORTED_SCHEMA_VERSIONS:
            supported = ", ".join(map(str, SUPPORTED_SCHEMA_VERSIONS))
            errors.add("schema_version", f"Unsupported schema version; supported: {supported}.")
        cleaned["schema_version"] = version
    errors.raise_if_any()
    return cleaned
