"""Reads of the audit trail, always of one organization."""

from datetime import datetime

from django.core import signing
from django.db.models import BooleanField, QuerySet
from django.db.models.expressions import RawSQL

from core.errors import ValidationFailed

from .chain import timestamp
from .models import AuditEvent

CURSOR_SALT = "audit.cursor"
# A row comparison, which PostgreSQL bounds the (organization_id, occurred_at DESC, id DESC) index scan with: a page
# deep in a million entries reads 51 index entries, where `t < x OR (t = x AND id < y)` would filter every newer one.
_OLDER_THAN = 'ROW("audit_event"."occurred_at", "audit_event"."id") < ROW(%s::timestamptz, %s::uuid)'


def audit_event_list(*, org, action: str | None = None, actor_id: str | None = None, target_id: str | None = None,
                     since=None, until=None) -> QuerySet:
    """The org's entries matching the filters (the caller orders and pages: newest first). `action` is an exact
    action or a prefix ending in `.`; `since` and `until` are inclusive."""
    rows = AuditEvent.objects.for_org(org)
    if action:
        rows = rows.filter(action__startswith=action) if action.endswith(".") else rows.filter(action=action)
    if actor_id:
        rows = rows.filter(actor_id=actor_id)
    if target_id:
        rows = rows.filter(target_id=target_id)
    if since is not None:
        rows = rows.filter(occurred_at__gte=since)
    if until is not None:
        rows = rows.filter(occurred_at__lte=until)
    return rows


def audit_event_page(entries: QuerySet, *, limit: int, cursor: str | None = None, scope: str = "api"):
    """One page of `entries`, newest first: (rows, has_more, next_cursor). One query. The cursor is signed and
    tied to `scope` (the API's list, the dashboard's page); a forged or foreign one is ValidationFailed(cursor)."""
    entries = entries.order_by("-occurred_at", "-id")
    if cursor:
        try:
            payload = signing.loads(cursor, salt=f"{CURSOR_SALT}:{scope}")
            when, last_id = datetime.fromisoformat(payload["t"]), str(payload["id"])
        except (signing.BadSignature, KeyError, TypeError, ValueError):
            raise ValidationFailed(field_errors={"cursor": ["Invalid cursor."]}) from None
        entries = entries.filter(RawSQL(_OLDER_THAN, (when, last_id), output_field=BooleanField()))  # noqa: S611
    rows = list(entries[: limit + 1])
    has_more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = None
    if has_more and rows:
        last = rows[-1]
        next_cursor = signing.dumps({"t": last.occurred_at.isoformat(), "id": str(last.pk)},
                                    salt=f"{CURSOR_SALT}:{scope}")
    return rows, has_more, next_cursor


def entry_data(entry: AuditEvent) -> dict:
    """An entry as the API, the dashboard and the export show it (docs/api.md#audit-trail)."""
    return {
        "id": str(entry.id),
        "occurred_at": timestamp(entry.occurred_at),
        "action": entry.action,
        "actor": {"type": entry.actor_type, "id": entry.actor_id, "label": entry.actor_label},
        "target": {"type": entry.target_type, "id": entry.target_id, "label": entry.target_label},
        "changes": entry.changes,
        "ip": entry.ip,
        "user_agent": entry.user_agent,
        "request_id": entry.request_id,
        "chain": None if entry.hash is None else {
            "seq": entry.chain_seq, "prev_hash": entry.prev_hash, "hash": entry.hash,
        },
    }


def verification_data(job) -> dict:
    """A verification job as the API shows it (docs/api.md#audit-trail)."""
    succeeded = job.status == "succeeded"
    return {
        "id": str(job.id),
        "object": "audit_verification",
        "status": job.status,
        "created_at": timestamp(job.created_at),
        "started_at": None if job.started_at is None else timestamp(job.started_at),
        "finished_at": None if job.finished_at is None else timestamp(job.finished_at),
        "progress": {"entries_checked": job.entries_checked, "head_seq": job.head_seq},
        "result": {
            "intact": job.intact, "entries_checked": job.entries_checked,
            "first_broken_id": None if job.first_broken_id is None else str(job.first_broken_id),
        } if succeeded else None,
        "error": job.error,
    }
