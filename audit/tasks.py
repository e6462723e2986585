"""Sealing the chain right after commit (a task per batch of orgs, published off the request's thread), a beat
sweep sealing whatever a lost publish left, and the daily retention purge."""

from celery import shared_task
from django.db import close_old_connections, transaction

from core.outbox import OutboxSettings, Publisher

from . import chain
from .models import AuditEvent

SWEEP_AFTER_SECONDS = 5


@shared_task(name="audit.seal_orgs", ignore_result=True)
def seal_orgs(org_ids: list[str]) -> int:
    """Seals the pending entries of each org (idempotent: a second run finds nothing to seal)."""
    close_old_connections()
    return sum(chain.seal(org_id) for org_id in dict.fromkeys(org_ids))


publisher = Publisher(
    seal_orgs, name="audit", items="organizations", tunables=OutboxSettings("AUDIT_SEAL", retry_schedule=()),
    due=lambda: AuditEvent.objects.none(), sweep_limit=0, batch_size=lambda: 100, window=lambda: 0.2,
)


def seal_after_commit(org_id) -> None:
    """Once the current transaction commits, the org's chain gets sealed by a worker (never by this request)."""
    transaction.on_commit(lambda: publisher.publish([org_id], background=True))


@shared_task(name="audit.seal_pending", ignore_result=True)
def seal_pending() -> int:
    """Beat: seals entries a lost publish (broker down, process killed) left pending for a few seconds."""
    close_old_connections()
    return sum(chain.seal(org_id) for org_id in chain.orgs_with_unsealed(older_than_seconds=SWEEP_AFTER_SECONDS))


@shared_task(name="audit.purge", ignore_result=True)
def purge() -> int:
    """Daily: entries older than AUDIT_RETENTION_DAYS go (docs/api.md#audit-trail)."""
    close_old_connections()
    return chain.purge()
