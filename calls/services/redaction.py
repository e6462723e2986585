"""Calls stored before the current detector (or before redaction existed) redacted again, in place: the call's text,
its follow-ups' text, its order answers and its stored event bodies (`manage.py redact_stored_calls`)."""

import json

from django.db import transaction

from core.sensitive import DETECTOR_VERSION
from orgs.models import Organization
from webhooks.models import Event

from .. import redaction as redacting
from ..call_fields import evidence_pseudo_checks
from ..evidence import evidence_marks
from ..models import Call, CallbackRequest, Escalation, Message, Order
from .recordings import recording_withhold

# The keys of an event's data whose strings are a caller's words (ids, times, numbers and addresses that are the
# point of their field stay as they are).
EVENT_TEXT_KEYS = frozenset({"summary", "message", "reason", "custom_window", "context", "answer", "evidence",
                             "value"})


def _redact_event_data(redactor, value, key=None):
    if isinstance(value, dict):
        return {k: _redact_event_data(redactor, v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_event_data(redactor, item, key) for item in value]
    if isinstance(value, str) and key in EVENT_TEXT_KEYS:
        return redactor.text(value)
    return value


def call_redact_stored(*, call_id, org: Organization) -> bool:
    """Applies the current detector to one stored call under its lock, in one transaction: returns False when the
    call is already at DETECTOR_VERSION (nothing is read or written again), True once redacted. Counts add up with
    what the call showed; text redacted before yields nothing new, so a second run changes nothing."""
    redactor = redacting.redactor_for(org)
    with transaction.atomic():
        call = Call.objects.select_for_update().filter(pk=call_id, organization=org).first()
        if call is None or (call.redaction or {}).get("detector_version") == DETECTOR_VERSION:
            return False
        transcript, scan = redacting.redact_transcript(redactor, call.transcript or [])
        changed = transcript != call.transcript
        checks = redacting.redact_checks(scan, call.quality_checks or [])
        fields = redacting.redact_fields(redactor, scan, call.fields or {})
        summary = redactor.text(call.summary)
        questions = [redactor.text(question) for question in call.unanswered_questions or []]
        changed = changed or (checks, fields, summary, questions) != (
            call.quality_checks, call.fields, call.summary, call.unanswered_questions)
        call.transcript, call.quality_checks, call.fields = transcript, checks, fields
        call.summary, call.unanswered_questions = summary, questions
        if changed and call.evidence_marks is not None:
            call.evidence_marks = evidence_marks(transcript, checks + evidence_pseudo_checks(fields))
        for model, names in ((Message, ("message",)), (CallbackRequest, ("reason", "custom_window")),
                             (Escalation, ("context",))):
            for row in model.objects.filter(call=call):
                redacted = {name: redactor.text(getattr(row, name)) for name in names}
                if any(redacted[name] != getattr(row, name) for name in names):
                    for name, value in redacted.items():
                        setattr(row, name, value)
                    row.save(update_fields=[*names, "updated_at"])
        order = Order.objects.filter(call=call).first()
        if order is not None:
            answers = redacting.redact_answers(redactor, order.order_answers)
            items = [{**item, "answers": redacting.redact_answers(redactor, item.get("answers", []))}
                     for item in order.items]
            if (answers, items) != (order.order_answers, order.items):
                order.order_answers, order.items = answers, items
                order.save(update_fields=["order_answers", "items", "updated_at"])
        for event in Event.objects.filter(organization=org, call_id=call.pk).only("id", "payload"):
            body = json.loads(event.payload)
            redacted = {**body, "data": _redact_event_data(redactor, body.get("data"))}
            if redacted != body:
                Event.objects.filter(pk=event.pk).update(payload=json.dumps(redacted, separators=(",", ":")).encode())
        call.redaction = redacting.redaction_after(call, redactor, org=org)
        if call.redaction["recording_withheld"]:
            recording_withhold(call=call)
        call.save(update_fields=["transcript", "quality_checks", "fields", "summary", "unanswered_questions",
                                 "evidence_marks", "redaction", "updated_at"])
    return True
