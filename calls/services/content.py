"""Deleting a call's content: the one definition of what "content" is, used by the retention purge, a deletion on
request and the erasure of a caller (docs/privacy.md#retention-and-erasure).

A call's content has two parts:

- `transcript`: the transcript, the summary, the quality checks' evidence (verdicts stay), the messages' text and
  caller names, the call fields' evidence (values stay), the unanswered questions (their number stays, as nulls,
  so analytics count them still), the order's answers, and the caller's name and e-mail as the agent heard them;
- `recording`: the audio, row and file.

What stays (the tombstone): ids, times, location, duration, direction, classification, disposition, outcome, score,
the order's lines and totals, the fields' values, and `content_deleted_at` with `content_deleted_reason`. Nothing that
analytics count changes (calls 0016 makes the rollup trigger compare counted values only), so a purge never moves a
figure. The stored bodies of the call's events become tombstones too (webhooks.services.events_tombstone), and one
`call.content_deleted` goes out per call that lost something.
"""

import logging
from datetime import datetime

from django.db import connection, transaction
from django.utils import timezone

from audit import services as audit
from notifications.models import EmailNotification
from orgs.models import Organization
from webhooks.services import emit_many, events_tombstone

from ..models import Call, ContentDeletedReason, Message, Order, Recording

logger = logging.getLogger("calls")

TRANSCRIPT = "transcript"
RECORDING = "recording"
PARTS = (TRANSCRIPT, RECORDING)
CONTENT_DELETED_NOTE = "[content deleted]"

# The transcript part, as one UPDATE over a batch of calls (jsonb built in the database: no row travels to Python).
_DELETE_TRANSCRIPT_SQL = """
UPDATE calls_call SET
    transcript = '[]'::jsonb,
    summary = NULL,
    evidence_marks = NULL,
    caller_name = NULL,
    caller_email = NULL,
    quality_checks = coalesce((
        SELECT jsonb_agg(CASE WHEN jsonb_typeof(q) = 'object' THEN q || '{"evidence": []}'::jsonb ELSE q END
                         ORDER BY i)
          FROM jsonb_array_elements(CASE WHEN jsonb_typeof(quality_checks) = 'array' THEN quality_checks
                                         ELSE '[]'::jsonb END) WITH ORDINALITY t(q, i)), '[]'::jsonb),
    fields = coalesce((
        SELECT jsonb_object_agg(f.key, CASE WHEN jsonb_typeof(f.value) = 'object'
                                            THEN f.value || '{"evidence": null, "evidence_verified": false}'::jsonb
                                            ELSE f.value END)
          FROM jsonb_each(CASE WHEN jsonb_typeof(fields) = 'object' THEN fields ELSE '{}'::jsonb END) f),
        '{}'::jsonb),
    unanswered_questions = coalesce((
        SELECT jsonb_agg('null'::jsonb)
          FROM jsonb_array_elements(CASE WHEN jsonb_typeof(unanswered_questions) = 'array' THEN unanswered_questions
                                         ELSE '[]'::jsonb END)), '[]'::jsonb),
    content_deleted_at = %s,
    content_deleted_reason = %s,
    updated_at = %s
WHERE id = ANY(%s::uuid[]) AND content_deleted_at IS NULL
RETURNING id
"""


def _clean_parts(parts) -> list[str]:
    unknown = [part for part in parts if part not in PARTS]
    if unknown or not parts:
        raise ValueError(f"Unknown content parts {unknown!r}; known: {PARTS}")
    return [part for part in PARTS if part in parts]


def calls_content_delete(
    *,
    org: Organization,
    call_ids,
    parts,
    reason: str,
    now: datetime | None = None,
    skip_locked: bool = False,
    audit_each: bool = True,
) -> dict[str, list]:
    """Deletes `parts` of the content of `call_ids` (the org's calls; others are ignored) in one transaction, and
    returns `{call_id: [parts deleted]}` for the calls that lost something (a second run returns `{}`).

    Locks the calls first (`skip_locked`: a call another transaction holds, a completion say, is left for the next
    purge run instead of waited for, so a purge never stalls ingestion). For each call that lost something, its
    events' stored bodies become tombstones, `call.content_deleted` is emitted and, with `audit_each`, a
    `call.content_deleted` audit entry (ids and parts only) is written. Recording files leave storage inside the
    transaction: a file that cannot be deleted rolls everything back, to be tried again.
    """
    parts = _clean_parts(parts)
    if reason not in ContentDeletedReason.values:
        raise ValueError(f"Unknown reason {reason!r}")
    now = now or timezone.now()
    with transaction.atomic():
        locking = Call.objects.select_for_update(skip_locked=skip_locked).filter(organization=org, pk__in=call_ids)
        calls = {call.pk: call for call in locking.order_by("pk").only("id", "location_id")}
        deleted: dict = {}
        if TRANSCRIPT in parts and calls:
            with connection.cursor() as cursor:
                cursor.execute(_DELETE_TRANSCRIPT_SQL, [now, reason, now, list(calls)])
                emptied = [row[0] for row in cursor.fetchall()]
            if emptied:
                Message.objects.filter(call_id__in=emptied).update(message="", caller_name=None, updated_at=now)
                # The stored copies of the e-mails that told the team about these calls quoted them.
                EmailNotification.objects.filter(call_id__in=emptied).update(
                    subject=CONTENT_DELETED_NOTE, body_text=CONTENT_DELETED_NOTE, body_html="", updated_at=now)
                orders_without_answers(emptied, now)
            for pk in emptied:
                deleted.setdefault(pk, []).append(TRANSCRIPT)
        if RECORDING in parts and calls:
            recordings = list(Recording.objects.filter(call_id__in=list(calls)).only("id", "call_id", "file"))
            if recordings:
                Recording.objects.filter(pk__in=[r.pk for r in recordings]).delete()
                for recording in recordings:
                    deleted.setdefault(recording.call_id, []).append(RECORDING)
                    if recording.file.name:
                        recording.file.storage.delete(recording.file.name)
        if deleted:
            events_tombstone(org=org, call_ids=list(deleted), reason=reason)
            emit_many(org=org, type="call.content_deleted", items=[
                ({"call_id": str(pk), "location_id": str(calls[pk].location_id) if calls[pk].location_id else None,
                  "parts": gone, "reason": reason}, calls[pk].location_id)
                for pk, gone in deleted.items()
            ])
        if audit_each:
            for pk, gone in deleted.items():
                audit.record(org=org, action="call.content_deleted", target_type="call", target_id=pk,
                             target_label=f"call {pk}", changes={"parts": [None, gone], "reason": [None, reason]})
    return deleted


def call_content_delete(*, call: Call, parts, reason: str) -> list[str]:
    """`calls_content_delete` for one call: the parts it lost now ([] when they were gone already)."""
    return calls_content_delete(org=call.organization, call_ids=[call.pk], parts=parts, reason=reason).get(call.pk, [])


def orders_without_answers(call_ids, now) -> None:
    """The caller's answers leave the orders of these calls (per line and per order); lines and totals stay."""
    for order in Order.objects.filter(call_id__in=call_ids).only("id", "items", "order_answers"):
        items = [{**item, "answers": []} if isinstance(item, dict) else item for item in order.items or []]
        if items != order.items or order.order_answers:
            Order.objects.filter(pk=order.pk).update(items=items, order_answers=[], updated_at=now)


_suppressed = None


def suppression_checked_by(check) -> None:
    """`check(org, phone_number) -> bool`: the privacy app's suppression list, registered from its AppConfig.ready()
    (it ranks above this app)."""
    global _suppressed  # noqa: PLW0603 - registered once, from AppConfig.ready()
    _suppressed = check


def is_suppressed(*, org: Organization, phone_number: str) -> bool:
    """Whether calls from this number keep no content (the organization's suppression list)."""
    return _suppressed is not None and _suppressed(org, phone_number)


def tombstone_in_place(call: Call) -> None:
    """The transcript part of a call being completed right now (its caller is suppressed: privacy's suppression
    list), on the unsaved row itself, so nothing of it is ever written. The caller saves; messages and the order are
    stored empty by the completion."""
    call.transcript = []
    call.summary = None
    call.evidence_marks = None
    call.caller_name = None
    call.caller_email = None
    call.quality_checks = [{**check, "evidence": []} for check in call.quality_checks]
    call.fields = {name: {**entry, "evidence": None, "evidence_verified": False} for name, entry in call.fields.items()}
    call.unanswered_questions = [None for _ in call.unanswered_questions]
