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
from orgs.models import Organization
from webhooks.services import emit_many, events_tombstone

from ..models import Call, ContentDeletedReason, Recording

logger = logging.getLogger("calls")

TRANSCRIPT = "transcript"
RECORDING = "recording"
PARTS = (TRANSCRIPT, RECORDING)
CONTENT_DELETED_NOTE = "[content deleted]"

# The transcript part over a batch of calls in one statement (below), jsonb built in the database so no row travels
# to Python: the calls emptied, then their messages' text, the stored copies of the e-mails that told the team about
# them (they quoted them) and their orders' answers. A statement per call, or per table, made a purge crawl.
_EMPTY_CALLS = """
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
    content_deleted_at = %(now)s,
    content_deleted_reason = %(reason)s,
    updated_at = %(now)s
WHERE id = ANY(%(ids)s::uuid[]) AND content_deleted_at IS NULL
RETURNING id
"""

_EMPTY_MESSAGES = """
UPDATE calls_message SET message = '', caller_name = NULL, updated_at = %(now)s
 WHERE call_id IN (SELECT id FROM emptied)
"""

_EMPTY_EMAILS = """
UPDATE notifications_emailnotification
   SET subject = %(note)s, body_text = %(note)s, body_html = '', updated_at = %(now)s
 WHERE call_id IN (SELECT id FROM emptied)
"""

# The orders of `calls` (a subquery) without the caller's answers, per line and per order; lines and totals stay.
_ITEMS_WITHOUT_ANSWERS = """
CASE WHEN jsonb_typeof(o.items) = 'array' THEN coalesce((
    SELECT jsonb_agg(CASE WHEN jsonb_typeof(i) = 'object' THEN i || '{"answers": []}'::jsonb ELSE i END ORDER BY n)
      FROM jsonb_array_elements(o.items) WITH ORDINALITY t(i, n)), '[]'::jsonb)
     ELSE o.items END
"""


def _orders_without_answers_sql(calls: str) -> str:
    return ("UPDATE calls_order o SET items = " + _ITEMS_WITHOUT_ANSWERS  # noqa: S608 - constants only
            + ", order_answers = '[]'::jsonb, updated_at = %(now)s WHERE o.call_id IN (" + calls + ")"
            " AND (o.order_answers <> '[]'::jsonb OR (" + _ITEMS_WITHOUT_ANSWERS + ") IS DISTINCT FROM o.items)")


_DELETE_TRANSCRIPT_SQL = (
    "WITH emptied AS (" + _EMPTY_CALLS + "), messages AS (" + _EMPTY_MESSAGES  # noqa: S608 - constants only
    + "), emails AS (" + _EMPTY_EMAILS + "), orders AS (" + _orders_without_answers_sql("SELECT id FROM emptied")
    + ") SELECT id FROM emptied"
)


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
        located = dict(locking.order_by("pk").values_list("id", "location_id"))  # {call id: its location id}
        deleted: dict = {}
        if TRANSCRIPT in parts and located:
            with connection.cursor() as cursor:
                cursor.execute(_DELETE_TRANSCRIPT_SQL, {"now": now, "reason": reason, "ids": list(located),
                                                        "note": CONTENT_DELETED_NOTE})
                emptied = [row[0] for row in cursor.fetchall()]
            for pk in emptied:
                deleted.setdefault(pk, []).append(TRANSCRIPT)
        if RECORDING in parts and located:
            recordings = list(Recording.objects.filter(call_id__in=list(located)).only("id", "call_id", "file"))
            if recordings:
                Recording.objects.filter(pk__in=[r.pk for r in recordings]).delete()
                for recording in recordings:
                    deleted.setdefault(recording.call_id, []).append(RECORDING)
                    if recording.file.name:
                        recording.file.storage.delete(recording.file.name)
        if deleted:
            events_tombstone(org=org, call_ids=list(deleted), reason=reason)
            emit_many(org=org, type="call.content_deleted", items=[
                ({"call_id": str(pk), "location_id": str(located[pk]) if located[pk] else None,
                  "parts": gone, "reason": reason}, located[pk])
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
    with connection.cursor() as cursor:
        cursor.execute(_orders_without_answers_sql("SELECT unnest(%(ids)s::uuid[])"),
                       {"now": now, "ids": list(call_ids)})


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
