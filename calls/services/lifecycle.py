"""A call's start and its completion: the call row keyed by the runtime's call id, and everything a finished call
brings with it (classification and score, verified quality checks, the caller's contact, messages, the order) and
the events that follow from it (`contact.created`, `call.ended`, `call.message_taken`)."""

import re
from dataclasses import replace
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from contacts.services import contact_get_or_create_for_caller
from core.errors import ValidationFailed
from core.sensitive import DETECTOR_VERSION
from knowledge.models import Fact, TeamMember
from notifications.services import notify_message_taken
from orgs.models import Location, Organization
from webhooks.services import emit

from .. import payloads
from .. import redaction as redacting
from ..call_fields import call_field_values, evidence_pseudo_checks
from ..evidence import evidence_marks
from ..models import UNSCORABLE_CLASSIFICATIONS, Call, Classification, ContentDeletedReason, Message
from .content import is_suppressed, orders_without_answers, tombstone_in_place
from .lookups import existing_contact, locked_call, org_row, runtime_phone
from .orders import OrderInput, order_create
from .recordings import recording_withhold


def call_start(
    *,
    org: Organization,
    runtime_call_id: str,
    started_at: datetime,
    from_number: str | None = None,
    location_id=None,
    direction: str = Call.Direction.INBOUND,
) -> tuple[Call, bool]:
    """Creates the call for the runtime's call id, or returns the existing one: (call, created).

    A returning caller (a contact with this number already exists) is linked at once, so mid-call events
    carry the contact; a new caller's contact is made at completion, only for real engagement. A caller on the
    organization's suppression list (an erasure asked for it) makes a tombstone from the start: no number, no
    contact, and nothing of the content is ever stored (`store_content` false in the runtime's answer).
    """
    with transaction.atomic():
        existing = Call.objects.filter(organization=org, runtime_call_id=runtime_call_id).first()
        if existing is not None:
            return existing, False
        location = org_row(Location, org, location_id)
        from_number = runtime_phone(org, from_number, "from_number")
        suppressed = bool(from_number) and is_suppressed(org=org, phone_number=from_number)
        call = Call(
            organization=org,
            runtime_call_id=runtime_call_id,
            started_at=started_at,
            from_number=None if suppressed else from_number,
            location=location,
            direction=direction,
            contact=None if suppressed else existing_contact(org, from_number),
            # Whatever this call takes in from now on passes the current detector.
            redaction={"detector_version": DETECTOR_VERSION, "counts": {}, "recording_withheld": False},
        )
        if suppressed:
            call.content_deleted_at = timezone.now()
            call.content_deleted_reason = ContentDeletedReason.ERASURE
        try:
            with transaction.atomic():
                call.save(force_insert=True)
        except IntegrityError:
            # A concurrent retry inserted it first (the unique constraint decided); answer with that row.
            return Call.objects.get(organization=org, runtime_call_id=runtime_call_id), False
        return call, True


def _normalize_quote(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _checks_with_verification(checks: list[dict], transcript: list[dict]) -> list[dict]:
    """Quality checks in the stored shape. `verification` is ours to decide: `verified` when every quoted
    piece of evidence is found in the transcript (whitespace and case aside), else `unverified`."""
    corpus = [_normalize_quote(turn["text"]) for turn in transcript]
    shaped = []
    for check in checks:
        evidence = [str(quote) for quote in check.get("evidence", [])]
        verified = all(any(_normalize_quote(q) in text for text in corpus) for q in evidence)
        shaped.append({
            "name": check["name"],
            "verdict": check["verdict"],
            "evidence": evidence,
            "gap_type": check.get("gap_type"),
            "verification": "verified" if verified else "unverified",
        })
    return shaped


def _score_from_checks(checks: list[dict]) -> int | None:
    judged = [c for c in checks if c["verdict"] in ("pass", "fail")]
    if not judged:
        return None
    return round(100 * sum(c["verdict"] == "pass" for c in judged) / len(judged))


# What call_complete writes on the locked call (the start's fields and the trail belong to other writers).
COMPLETION_FIELDS = [
    "status", "ended_at", "duration_seconds", "classification", "disposition", "summary", "outcome", "outcome_tags",
    "transcript", "quality_checks", "evidence_marks", "caller_name", "caller_email", "scorable", "score", "contact",
    "knowledge_version", "facts_used", "unanswered_questions", "fields", "redaction", "updated_at",
]


def calls_abandon_stale(*, now: datetime | None = None) -> int:
    """Closes every call started more than CALL_COMPLETION_TIMEOUT_MINUTES ago and still in progress as
    "abandoned", in one UPDATE over a partial index; returns how many. No event: such a call was never classified.
    `call_complete` still completes an abandoned call and emits what it would have."""
    cutoff = (now or timezone.now()) - timedelta(minutes=settings.CALL_COMPLETION_TIMEOUT_MINUTES)
    return Call.objects.filter(status=Call.Status.IN_PROGRESS, started_at__lt=cutoff).update(
        status=Call.Status.ABANDONED
    )


def call_complete(
    *,
    org: Organization,
    runtime_call_id: str,
    ended_at: datetime,
    classification: str,
    disposition: str = Call.Disposition.COMPLETED,
    summary: str = "",
    outcome: str = "",
    outcome_tags: list[str] | None = None,
    transcript: list[dict] | None = None,
    quality_checks: list[dict] | None = None,
    score: int | None = None,
    duration_seconds: int | None = None,
    caller_name: str | None = None,
    caller_email: str | None = None,
    order: OrderInput | None = None,
    messages: list[dict] | None = None,
    start: dict | None = None,
    knowledge_version: int | None = None,
    facts_used: list | None = None,
    unanswered_questions: list[str] | None = None,
    fields: dict | None = None,
) -> tuple[Call, bool]:
    """Records the finished call and emits what follows from it: (call, completed_now).

    Completing an already completed call changes nothing and emits nothing (a runtime retry). `start` (the
    call-start fields) lets a completion whose start was lost create the call. Real engagement: the call is
    scorable, a new caller becomes a contact (`contact.created`, unless the org turned auto-saving off), and
    `call.ended` and `call.message_taken` go out. The other classifications are unscorable and emit none of them.
    `fields` are the org's call fields as the agent heard them (calls.call_fields: checked, evidence verified).
    """
    if (outcome == "order") != (order is not None):
        raise ValidationFailed(field_errors={"order": ["An order is required if and only if the outcome is 'order'."]})
    # Redacted first, before any lock is taken or anything is stored, validated against or echoed: from here on
    # only the redacted text exists (calls.redaction).
    redactor = redacting.redactor_for(org)
    transcript, scan = redacting.redact_transcript(redactor, transcript or [])
    quality_checks = redacting.redact_checks(scan, quality_checks or [])
    fields = redacting.redact_fields(redactor, scan, fields or {})
    summary = redactor.text(summary)
    unanswered_questions = [redactor.text(question) for question in unanswered_questions or []]
    messages = [{**message, "message": redactor.text(message.get("message"))} for message in messages or []]
    if order is not None:
        order = replace(order, order_answers=redacting.redact_answers(redactor, order.order_answers),
                        items=[{**item, "answers": redacting.redact_answers(redactor, item.get("answers", []))}
                               for item in order.items])
    if start is not None:
        call_start(org=org, runtime_call_id=runtime_call_id, **start)
    with transaction.atomic():
        call = locked_call(org=org, runtime_call_id=runtime_call_id)
        if call.is_completed:
            return call, False
        if ended_at < call.started_at:
            raise ValidationFailed(field_errors={"ended_at": ["ended_at must not be before started_at."]})
        real = classification == Classification.REAL_ENGAGEMENT
        checks = _checks_with_verification(quality_checks, transcript)
        call.fields = call_field_values(org=org, location_id=call.location_id, reported=fields or {},
                                        real_engagement=real, transcript=transcript)
        call.status = Call.Status.COMPLETED
        call.ended_at = ended_at
        call.duration_seconds = (
            duration_seconds if duration_seconds is not None else int((ended_at - call.started_at).total_seconds())
        )
        call.classification = classification
        call.disposition = disposition
        call.summary = summary
        call.outcome = outcome
        call.outcome_tags = list(outcome_tags or [])
        call.transcript = transcript
        call.quality_checks = checks
        # Once here, so the call page only reads them; the fields' quotes are numbered after the checks.
        call.evidence_marks = evidence_marks(transcript, checks + evidence_pseudo_checks(call.fields))
        call.caller_name = caller_name or None
        call.caller_email = caller_email or None
        call.knowledge_version = knowledge_version
        call.facts_used = _facts_used(org, facts_used or [])
        call.unanswered_questions = [question.strip() for question in unanswered_questions or [] if question.strip()]
        # Unscorable classifications never carry a score, whatever the runtime sent (docs/api.md#calls).
        call.scorable = classification not in UNSCORABLE_CLASSIFICATIONS
        call.score = (score if score is not None else _score_from_checks(checks)) if call.scorable else None
        call.redaction = redacting.redaction_after(call, redactor, org=org)
        if call.redaction["recording_withheld"]:
            recording_withhold(call=call)  # arrived before the completion: not kept
        tombstone = call.content_deleted_at is not None
        if tombstone:
            # Its content was deleted before it ended (a suppressed caller, a deletion on request): keep none of it.
            tombstone_in_place(call)
            caller_name = caller_email = None

        contact_created = None
        if real and call.from_number:
            if org.auto_save_contacts:
                contact, created = contact_get_or_create_for_caller(
                    org=org, phone_number=call.from_number, name=caller_name, email=caller_email, call=call
                )
                call.contact = contact
                contact_created = contact if created else None
            elif call.contact_id is None:
                call.contact = existing_contact(org, call.from_number)
        call.save(update_fields=COMPLETION_FIELDS)

        placed = order_create(call=call, data=order, placed_at=ended_at) if order is not None else None
        if placed is not None and tombstone:
            orders_without_answers([call.pk], timezone.now())
            placed.refresh_from_db()
        taken = [
            _message_create(call=call, data={**message, "message": "", "caller_name": None} if tombstone else message,
                            caller_name=caller_name) for message in (messages or [])
        ]
        if tombstone:
            for message in taken:
                message.caller_name = None
            Message.objects.filter(call=call).update(caller_name=None)

        if contact_created is not None:
            emit(org=org, type="contact.created", data=payloads.contact_created_data(contact_created, call),
                 location_id=call.location_id)
        if real:
            emit(org=org, type="call.ended", data=payloads.call_ended_data(call, placed), location_id=call.location_id)
            for message in taken:
                emit(org=org, type="call.message_taken", data=payloads.message_taken_data(message, call),
                     location_id=call.location_id)
                notify_message_taken(message=message, call=call)  # e-mailed exactly when announced
        return call, True


def _facts_used(org: Organization, fact_ids: list) -> list[dict]:
    """The facts as they are now, `{id, label}` in the order given (repeats dropped): a later rename or delete of
    a fact does not rewrite what this call relied on. An id that is not this org's fact is a 400."""
    ids = list(dict.fromkeys(str(fact_id) for fact_id in fact_ids))
    labels = dict(Fact.objects.for_org(org).filter(pk__in=ids).values_list("pk", "label"))
    labels = {str(pk): label for pk, label in labels.items()}
    unknown = [fact_id for fact_id in ids if fact_id not in labels]
    if unknown:
        raise ValidationFailed(field_errors={"facts_used": [f"Not a fact of this organization: {', '.join(unknown)}."]})
    return [{"id": fact_id, "label": labels[fact_id]} for fact_id in ids]


def _message_create(*, call: Call, data: dict, caller_name: str | None) -> Message:
    """A message the caller left for the team; announced by call_complete (real engagement only)."""
    member = org_row(TeamMember, call.organization, data.get("for_team_member_id"))
    return Message.objects.create(
        organization=call.organization,
        call=call,
        for_team_member=member,
        for_team_member_name=data.get("for_team_member_name") or (member.name if member else None),
        message=data["message"],
        caller_name=data.get("caller_name") or caller_name or (call.contact.name if call.contact else None),
        callback_number=runtime_phone(call.organization, data.get("callback_number"), "messages.callback_number")
        or call.from_number,
    )
