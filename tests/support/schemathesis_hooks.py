"""Schemathesis hooks for the fuzz run of the OpenAPI schema (tests/api/test_schema_fuzz.py; also
`SCHEMATHESIS_HOOKS=tests.support.schemathesis_hooks schemathesis run ...`, README "API").

Each one stands for a rule the schema states in words but no JSON Schema can check, and does no more than that:
- `Idempotency-Key` is "unique per request you mean": each generated request gets its own, or the fuzzer's reuse of
  one value across different requests is (rightly) answered 422 `idempotency_key_reused`;
- `cursor` is "a next_cursor this list returned": a generated one is (rightly) 400 `Invalid cursor.`;
- the values the server checks against the world or against other values rather than a pattern: a phone number
  that phonenumbers calls invalid, a webhook URL whose host resolves to no public address, `location_ids` that are
  not the organization's locations, a `since` older than the retention, an analytics range longer than allowed,
  weekly hours whose start is not before their end or that overlap, a PATCH that would leave a rule without its
  destination or without keywords and description;
- a query parameter the operation does not have is refused (docs/api.md), which OpenAPI cannot state for a query.
A 400 that names only those fields with only those messages is not a schema mismatch; any other 400 fails the run.
"""

import re
import uuid

import schemathesis

# Per field, the messages (regular expressions, matched from the start) of rules checked against the world or
# across values, which JSON Schema cannot state.
SEMANTIC_REFUSALS = {
    "phone_number": (r"Enter a valid phone number",),
    # A PATCH is checked against the rule it changes (the create body states these in its schema).
    "destination_phone": (r"Enter a valid phone number", r"Required when destination_type", r"Must be null when"),
    "destination_team_member_id": (r"Required when destination_type", r"Must be null when"),
    "url": (r"Enter a valid URL", r"The host resolves to", r"The URL must", r"Enter a valid https:// URL"),
    # A date-time's years are 2000 to 2100 (docs/api.md#limits): JSON Schema's `format` has no bounds.
    "since": (r"Must be within the last", r"Must not be in the future",
              r"Enter a date from 2000-01-01 to 2100-12-31\."),
    "date": (r"Enter a date from 2000-01-01 to 2100-12-31\.",),  # a reconciliation's day, likewise
    "until": (r"Must be within the last", r"Must not be in the future", r"Must not be before",
              r"Enter a date from 2000-01-01 to 2100-12-31\.",
              r"until must not be before since\.", r"The range may span at most \d+ days\."),  # analytics' range
    "location_ids": (r"Not a location of this organization: ",  # ids of no location of the key's organization
                     r"Webhook subscriptions are the organization's: ",),  # a rule's metric against its locations
    # An alert rule's PATCH is checked against the rule it changes: the metric decides the condition's bounds (the
    # create body's schema states them, alerts.api.serializers.add_alert_rule_conditions).
    "comparator": (r"line_silent fires when no call came: its comparator is lt\.",),
    "threshold": (r"line_silent fires when no call came: its threshold is 1", r"A rate is a fraction: "),
    "min_calls": (r"line_silent needs at least 1 expected call to fire\.",),
    # retention's per-location entries: a location of the organization, each listed once
    "locations": (r"Item \d+: location_id: Not a location of this organization\.",
                  r"Item \d+: location_id: This location is listed twice\."),
    # A call field's choices against its type, the stored one for a PATCH (the create body's schema states it).
    "choices": (r"Only an enum field has choices\.", r"An enum field needs 1 to 50 choices\."),
    "timezone": (r"Enter a valid IANA time zone",),  # a name the tz database does not have
    "keywords": (r"Keywords must not repeat \(case-insensitively\)",),  # "Manager" and "manager"
    "cursor": (r"Invalid cursor\.",),  # the coverage phase sends its own cursors, whatever map_query does
    # start before end, and no two windows of a day overlapping: relations between values
    "weekly_hours": (r"Item \d+: start must be before end\.", r"Items \d+ and \d+ overlap on \w+\."),
}
FORM_REFUSALS = (r"A rule needs keywords or a description",)  # a PATCH emptying what the rule had


@schemathesis.hook
def map_headers(context, headers):
    if headers and "Idempotency-Key" in headers:
        headers["Idempotency-Key"] = uuid.uuid4().hex
    return headers


@schemathesis.hook
def map_query(context, query):
    if query:
        query.pop("cursor", None)
    return query


def _semantic_refusal(response) -> bool:
    if response.status_code == 422:  # a key the coverage phase reused (map_headers reaches the fuzzing phase only)
        return response.json() == {"error": "idempotency_key_reused"}
    if response.status_code != 400:
        return False
    try:
        details = response.json()["details"]
    except (ValueError, KeyError, TypeError):
        return False
    fields = details.get("fieldErrors") or {}
    forms = details.get("formErrors") or []
    if not all(any(re.match(pattern, message) for pattern in FORM_REFUSALS) for message in forms):
        return False
    return bool(fields or forms) and all(
        messages == ["Unknown query parameter."]  # refused by rule (docs/api.md); OpenAPI cannot close a query
        or (field in SEMANTIC_REFUSALS and all(any(re.match(pattern, message) for pattern in SEMANTIC_REFUSALS[field])
                                               for message in messages))
        for field, messages in fields.items()
    )


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keeps every failure but a positive-data refusal that only names rules checked against the world, and a
    negative-data "acceptance" that was a 414 (a refusal: path and query over 4,096 characters, documented)."""
    if failure.code == "ST201":
        return response.status_code != 414
    return failure.code != "ST202" or not _semantic_refusal(response)
