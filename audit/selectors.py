"""Reads of the audit trail, always of one organization."""

from django.db.models import QuerySet

from .chain import timestamp
from .models import AuditEvent


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
