"""`record`: the one writer of audit entries, called by each service inside the transaction of its change.

One INSERT, nothing else in the writing transaction: a rolled-back change leaves no entry, a committed one always
has its entry, and writers of one organization never wait for each other (the chain is sealed after commit by
audit.tasks.seal_orgs, and by `verify` for whatever is still pending).
"""

import datetime as dt
import decimal
import uuid
from enum import Enum

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone

from core.actors import SYSTEM, Actor, actor_of, current_actor, current_request, key_actor, user_actor  # noqa: F401
from core.clientaddr import client_address
from core.redaction import scrub

from . import tasks
from .actions import ACTIONS
from .chain import content_mac
from .models import NO_ORGANIZATION, AuditEvent

REDACTED = "[redacted]"
# Fields whose values never reach an entry, not even hashed.
SECRET_FIELDS = frozenset({
    "secret", "previous_secret", "signing_secret", "password", "key", "key_digest", "plaintext", "token",
    "token_digest", "nonce", "api_key", "authorization",
})


def json_safe(value):
    """A value as the entry's JSON keeps it: ids and times as text, model rows as their id, secrets scrubbed."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, Enum):
        return json_safe(value.value)
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, (uuid.UUID, decimal.Decimal)):
        return str(value)
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, models.Model):
        return str(value.pk)
    if isinstance(value, dict):
        return {str(k): REDACTED if str(k) in SECRET_FIELDS else json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(item) for item in value]
    return scrub(str(value))


def values_of(instance, fields) -> dict:
    """`{field: value}` of a row, foreign keys as their id (`location` -> the location's id)."""
    out = {}
    for field in fields:
        model_field = instance._meta.get_field(field)
        out[field] = getattr(instance, model_field.attname)
    return out


def created(values: dict) -> dict:
    """The changes of a creation: `{field: [null, value]}`."""
    return {field: [None, value] for field, value in values.items()}


def deleted(values: dict) -> dict:
    """The changes of a deletion: `{field: [value, null]}`."""
    return {field: [value, None] for field, value in values.items()}


def diff(before: dict, after: dict) -> dict:
    """`{field: [before, after]}` for the fields whose value differs (compared as the entry would show them)."""
    out = {}
    for field, value in after.items():
        old, new = json_safe(before.get(field)), json_safe(value)
        if old != new:
            out[field] = [old, new]
    return out


def _redact(changes: dict) -> dict:
    safe = {}
    for field, pair in changes.items():
        if field in SECRET_FIELDS:
            safe[field] = [None if side is None else REDACTED for side in pair] if isinstance(pair, list) else REDACTED
        else:
            safe[field] = json_safe(pair)
    return safe


def record(*, org, action: str, target=None, target_type: str | None = None, target_id=None,
           target_label: str | None = None, changes: dict | None = None, actor: Actor | None = None) -> AuditEvent:
    """Writes one entry in the caller's transaction (the caller holds it: the change and its entry commit or roll
    back together). `target` is the row acted on (its id and str() by default); `actor` defaults to who the
    current request is (core.actors), else `system`. Changes are `{field: [before, after]}`, secrets
    redacted. `org` None files the entry under no organization (a sign-in failure for an unknown address)."""
    if action not in ACTIONS:
        raise ValueError(f"Unknown audit action {action!r}: add it to audit/actions.py and docs/api.md")
    if not settings.AUDIT_ENABLED:
        return None
    actor = actor or current_actor()
    request = current_request()
    if target is not None:
        target_id = target_id if target_id is not None else target.pk
        target_label = target_label if target_label is not None else str(target)
    org_id = NO_ORGANIZATION if org is None else getattr(org, "pk", org)  # an Organization or its id
    now = timezone.now()
    entry = AuditEvent(
        organization_id=org_id,
        occurred_at=now.replace(microsecond=now.microsecond // 1000 * 1000),  # as the API and the hash show it
        action=action,
        actor_type=actor.type,
        actor_id=actor.id,
        actor_label=scrub(actor.label)[:300],
        target_type=target_type or action.split(".")[0],
        target_id=None if target_id is None else str(target_id),
        target_label=scrub(target_label or "")[:300],
        changes=_redact(changes or {}),
        ip=client_address(request)[:64] if request is not None else None,
        user_agent=scrub(request.META.get("HTTP_USER_AGENT", ""))[:512] or None if request is not None else None,
        request_id=getattr(request, "request_id", None) if request is not None else None,
    )
    entry.content_mac = content_mac(entry)  # proves the entry was written here, not inserted by SQL
    entry.save(force_insert=True)
    tasks.seal_after_commit(org_id)
    return entry


@transaction.atomic
def record_alone(**kwargs) -> AuditEvent:
    """`record` in a transaction of its own, for what changes nothing else (a sign-in, a failed one)."""
    return record(**kwargs)
