"""Sensitive data out of a call's text before anything stores, emits, logs or keeps it (docs/privacy.md#redaction).

Every ingest point of the calls domain goes through here: the completion (transcript, summary, quality-check
evidence, messages, call-field string values and evidence, unanswered questions, order answers) and the mid-call
tool events (callback reasons, escalation context). The detector is core.sensitive; the organization's policy is
orgs.redaction. Structured fields whose purpose is the value (a contact's or callback's phone number, a booking's
e-mail) are kept as they are.
"""

from collections import Counter
from dataclasses import replace

from core.sensitive import DETECTOR_VERSION, PHONE, RECORDING_KINDS, Redactor, Scan
from knowledge.models import EscalationRule, TeamMember
from orgs.models import Location, Organization
from orgs.redaction import policy_of

from .models import Call


def published_numbers(org: Organization) -> frozenset[str]:
    """The organization's own numbers (its locations', team members' and escalation destinations'), E.164: a caller
    reading one back is not giving theirs."""
    numbers = set(Location.objects.filter(organization_id=org.pk).values_list("phone_number", flat=True))
    numbers |= set(TeamMember.objects.filter(organization_id=org.pk, phone_number__isnull=False)
                   .values_list("phone_number", flat=True))
    numbers |= set(EscalationRule.objects.filter(organization_id=org.pk, destination_phone__isnull=False)
                   .values_list("destination_phone", flat=True))
    return frozenset(number for number in numbers if number)


def redactor_for(org: Organization) -> Redactor:
    """A redactor under the organization's policy. Its own numbers are read only when phone numbers are redacted."""
    policy = policy_of(org)
    if PHONE in policy.kinds:
        policy = replace(policy, published=published_numbers(org))
    return Redactor(policy)


def withheld(org: Organization, heard) -> bool:
    """Whether a call where these kinds were heard keeps no recording."""
    return bool(set(heard) & RECORDING_KINDS) and not org.keep_recordings_with_sensitive_data


def redaction_after(call: Call, redactor: Redactor, *, org: Organization) -> dict:
    """The call's `redaction` with what `redactor` found added: counts summed, the recording withheld once it is."""
    current = call.redaction or {}
    counts = Counter(current.get("counts") or {})
    counts.update(redactor.tally.counts)
    return {
        "detector_version": DETECTOR_VERSION,
        "counts": dict(sorted(counts.items())),
        "recording_withheld": bool(current.get("recording_withheld")) or withheld(org, redactor.tally.heard),
    }


def redact_transcript(redactor: Redactor, transcript: list[dict]) -> tuple[list[dict], Scan]:
    scan = redactor.scan([(str(turn.get("speaker", "")), str(turn.get("text", ""))) for turn in transcript])
    return [{**turn, "text": scan.text(index)} for index, turn in enumerate(transcript)], scan


def redact_checks(scan: Scan, checks: list[dict]) -> list[dict]:
    """Evidence quotes redacted as the turns they quote, so a quote that matched still matches."""
    return [{**check, "evidence": [scan.quote(str(quote)) for quote in check.get("evidence", [])]}
            for check in checks]


def redact_fields(redactor: Redactor, scan: Scan, reported: dict) -> dict:
    """Call fields as reported, string values redacted as free text and evidence as quotes. Entries of the wrong
    shape are left for calls.call_fields to refuse (their messages never echo a value)."""
    out = {}
    for name, entry in reported.items():
        if isinstance(entry, dict):
            entry = dict(entry)
            if isinstance(entry.get("value"), str):
                entry["value"] = redactor.text(entry["value"])
            if isinstance(entry.get("evidence"), str):
                entry["evidence"] = scan.quote(entry["evidence"])
        out[name] = entry
    return out


def redact_answers(redactor: Redactor, answers: list[dict]) -> list[dict]:
    return [{**answer, "answer": redactor.text(answer.get("answer"))} for answer in answers]
