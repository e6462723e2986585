"""The organization's call fields as a completion reports them: each value checked against its field's type, the
quoted evidence kept only when the transcript says it, and the stored shape the call keeps.

A call stores `{name: {"label", "type", "value", "evidence", "evidence_verified"}}` under the field's name at
completion, so renaming or deleting the field later leaves the call as it was. Every problem is reported at once
under `fieldErrors.fields`, each message naming the call field (`party_size: must be a number`).
"""

import datetime
import json
import math
import operator
from functools import reduce

from django.db.models import Q

from core import numbers
from core.errors import ValidationFailed
from knowledge.models import CallField
from knowledge.selectors import call_fields_that_apply
from knowledge.services import CALL_FIELD_NAME

from .evidence import MAX_QUOTE_CHARS, fold_quote

MAX_STRING_CHARS = 1000
TEXT_TYPES = (CallField.Type.STRING, CallField.Type.ENUM)
ENTRY_KEYS = frozenset({"value", "evidence"})


def _problems(problems: dict, name: str, message: str) -> None:
    """Adds a problem of call field `name` at its dotted path (`fields.<name>`), which the API reports under
    `fields` as `<name>: <message>`. A name that is no field name at all (a dot, a digit) is reported as given,
    whole, rather than read as a deeper path."""
    if CALL_FIELD_NAME.fullmatch(name):
        problems.setdefault(f"fields.{name}", []).append(message)
    else:
        problems.setdefault("fields", []).append(f"{name!r}: {message}")


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_date(value) -> bool:
    if not isinstance(value, str) or len(value) != 10:
        return False
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def value_problem(field: CallField, value) -> str | None:
    """Why `value` (parsed JSON) cannot be `field`'s value, or None."""
    if field.type == CallField.Type.STRING:
        if not isinstance(value, str) or not value.strip():
            return "must be a non-blank string"
        if len(value) > MAX_STRING_CHARS:
            return f"must be at most {MAX_STRING_CHARS} characters"
    elif field.type == CallField.Type.NUMBER and not _is_number(value):
        return "must be a number"
    elif field.type == CallField.Type.BOOLEAN and not isinstance(value, bool):
        return "must be true or false"
    elif field.type == CallField.Type.DATE and not _is_date(value):
        return "must be a date (YYYY-MM-DD)"
    elif field.type == CallField.Type.ENUM and value not in field.choices:
        return f"must be one of: {', '.join(field.choices)}"
    return None


def _entry_problem(entry) -> str | None:
    if not isinstance(entry, dict):
        return "must be an object {value, evidence?}"
    unknown = sorted(set(entry) - ENTRY_KEYS)
    if unknown:
        return f"unknown key(s): {', '.join(unknown)}"
    if "value" not in entry:
        return "value is required"
    evidence = entry.get("evidence")
    if evidence is not None and (not isinstance(evidence, str) or len(evidence) > MAX_QUOTE_CHARS):
        return f"evidence must be a string of at most {MAX_QUOTE_CHARS} characters"
    return None


def call_field_filter(*, org, raw: dict[str, str]) -> Q:
    """`{name: raw value}` of a call list's `fields.<name>=` filters as the condition the calls must satisfy: each
    value as the containment `{name: {"value": typed value}}` (answered by the GIN index on calls.fields). A name
    that is not one of the org's call fields (as `org`'s scope sees them), or a value that none of its definitions
    accepts, is a 400 under `fields.<name>` (the API: `fields`, `<name>: <problem>`).

    A name may have several definitions, at locations that do not meet (knowledge.services): a call stored one
    name under one of them, and the value is read by each (`4` is a number for one and the text "4" for another).
    A call matches under any reading; the names read one way share one containment, as with a single definition."""
    definitions: dict[str, list[CallField]] = {}
    for field in CallField.objects.for_org(org).filter(name__in=list(raw)).order_by("name", "id"):
        definitions.setdefault(field.name, []).append(field)
    errors, readings = {}, {}
    for name, value in sorted(raw.items()):
        if name not in definitions:
            _problems(errors, name, "not a call field of this organization")
            continue
        typed, problems = {}, []
        for field in definitions[name]:
            try:
                parsed = parse_filter_value(field, value)
            except ValueError as problem:
                problems.append(str(problem))
                continue
            typed.setdefault(json.dumps(parsed), parsed)  # by JSON: True and 1 are different values here
        if not typed:
            for problem in sorted(set(problems)):
                _problems(errors, name, problem)
            continue
        readings[name] = list(typed.values())
    if errors:
        raise ValidationFailed(field_errors=errors)
    single = {name: {"value": values[0]} for name, values in readings.items() if len(values) == 1}
    condition = Q(fields__contains=single) if single else Q()
    for name, values in readings.items():
        if len(values) > 1:
            condition &= reduce(operator.or_, (Q(fields__contains={name: {"value": value}}) for value in values))
    return condition


def parse_filter_value(field: CallField, raw: str):
    """A query string's `fields.<name>=<raw>` as the JSON value stored for `field`, or raises ValueError with the
    problem: numbers and booleans are parsed, dates and strings compared as given. A value that is converted
    (a number, a boolean, a date) is at most `numbers.MAX_CHARS` characters, checked before anything reads it
    (core/numbers.py says why); a string or a choice is compared as given, so its cap is the one its value had
    to meet when stored (a longer one could match nothing)."""
    cap = MAX_STRING_CHARS if field.type in TEXT_TYPES else numbers.MAX_CHARS
    if len(raw) > cap:
        raise ValueError(f"must be at most {cap} characters")
    if field.type == CallField.Type.NUMBER:
        return numbers.parse_number(raw)
    if field.type == CallField.Type.BOOLEAN:
        if raw not in ("true", "false"):
            raise ValueError("must be true or false")
        return raw == "true"
    problem = value_problem(field, raw)
    if problem:
        raise ValueError(problem)
    return raw


def call_field_values(*, org, location_id, reported: dict, real_engagement: bool,
                      transcript: list[dict]) -> dict:
    """The stored `fields` of a completed call from the completion's `fields` ({name: {value, evidence?}}).

    Only the org's fields that apply to the call's location may be reported; a `required` one may be missing
    (or null) only when the call is not a real engagement. A quote is kept when it appears in a turn of the
    transcript (case and runs of whitespace aside), else dropped, the value then `evidence_verified: false`.
    Raises ValidationFailed with every problem, under `fields.<name>` in the order of the names.
    """
    applicable = {field.name: field for field in call_fields_that_apply(org=org, location_id=location_id)}
    unknown = set(reported) - set(applicable)
    elsewhere = set(CallField.objects.for_org(org).filter(name__in=unknown).values_list("name", flat=True))
    turns = [fold_quote(str(turn.get("text", ""))) for turn in transcript]
    problems, stored = {}, {}
    for name in sorted(set(reported) | {name for name, field in applicable.items() if field.required}):
        entry = reported.get(name)
        if name in unknown:
            _problems(problems, name, "does not apply to this call's location" if name in elsewhere
                      else "not a call field of this organization")
            continue
        field = applicable[name]
        if entry is not None and (problem := _entry_problem(entry)):
            _problems(problems, name, problem)
            continue
        if entry is None or entry["value"] is None:
            if field.required and real_engagement:
                _problems(problems, name, "is required")
            continue
        if problem := value_problem(field, entry["value"]):
            _problems(problems, name, problem)
            continue
        quote = entry.get("evidence")
        folded = fold_quote(quote).strip() if quote else ""
        verified = bool(folded) and any(folded in turn for turn in turns)
        stored[name] = {"label": field.label, "type": field.type, "value": entry["value"],
                        "evidence": quote if verified else None, "evidence_verified": verified}
    if problems:
        # Dotted paths: the API reports them under `fields` as `<name>: <problem>`, a form beside the field.
        raise ValidationFailed(field_errors=problems)
    return stored


def evidence_pseudo_checks(fields: dict) -> list[dict]:
    """The call's verified field quotes as evidence-only checks, in the order of the names, to be marked in the
    transcript after the quality checks (calls.evidence.evidence_marks numbers them on from there)."""
    return [{"evidence": [entry["evidence"]]} for _, entry in sorted(fields.items()) if entry.get("evidence")]
