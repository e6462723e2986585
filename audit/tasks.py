"""The chain's work in workers, all on the `maintenance` queue (CELERY_TASK_ROUTES routes `audit.*` there, never
behind webhook deliveries or e-mail): sealing
right after commit (at most one pending seal per organization), a beat sweep sealing whatever a lost publish left,
verification jobs, and the daily retention purge."""

import logging

from celery import shared_task
from django.db import close_old_connections, transaction
from django.utils import timezone

from core import counters
from core.outbox import OutboxSettings, Publisher

from . import chain
from .models import AuditEvent, AuditVerification

logger = logging.getLogger("audit")

SWEEP_AFTER_SECONDS = 5
# A seal requested for an org stays "pending" this long at most: a task the broker lost stops blocking the next
# publish then (and the beat sweep seals its entries well before).
SEAL_MARK_TTL_SECONDS = 60
# A sealer that finds another at work on the org asks again this much later (it never waits on the lock).
SEAL_RETRY_SECONDS = 1


def _mark(org_id) -> str:
    return f"audit:seal-pending:{org_id}"


@shared_task(name="audit.seal_orgs", ignore_result=True)
def seal_orgs(org_ids: list[str]) -> int:
    """Seals the pending entries of each org. Clears the org's pending mark first, so an entry committed from then
    on publishes a seal of its own, and one committed before is seen by this one. An org whose chain another sealer
    holds is asked for again shortly (unless a newer request is pending already): nothing waits on the lock."""
    close_old_connections()
    sealed = 0
    for org_id in dict.fromkeys(org_ids):
        counters.unmark(_mark(org_id))
        count, done = chain.seal_batches(org_id)
        sealed += count
        if not done:
            request_seal(org_id, countdown=SEAL_RETRY_SECONDS)
    return sealed


publisher = Publisher(
    seal_orgs, name="audit", items="organizations", tunables=OutboxSettings("AUDIT_SEAL", retry_schedule=()),
    due=lambda: AuditEvent.objects.none(), sweep_limit=0, batch_size=lambda: 100, window=lambda: 0.2,
)


def request_seal(org_id, *, countdown: float | None = None) -> bool:
    """Publishes a seal of the org unless one is pending already (a Redis SET NX mark, cleared by the task when it
    starts); True when published. Without Redis it publishes anyway: a duplicate seal only finds nothing to do."""
    if counters.mark_once(_mark(org_id), ttl=SEAL_MARK_TTL_SECONDS) is False:
        return False
    if countdown:
        try:
            seal_orgs.apply_async(([str(org_id)],), countdown=countdown, retry=False)
        except Exception:  # noqa: BLE001 - broker down: the beat sweep seals what is left
            counters.unmark(_mark(org_id))
            return False
    else:
        publisher.publish([org_id], background=True)
    return True


def seal_after_commit(org_id) -> None:
    """Once the current transaction commits, the org's chain gets sealed by a worker (never by this request)."""
    transaction.on_commit(lambda: request_seal(org_id))


@shared_task(name="audit.seal_pending", ignore_result=True)
def seal_pending() -> int:
    """Beat: seals entries a lost publish (broker down, process killed) left pending for a few seconds; an org
    another sealer holds is skipped (that sealer, or the next sweep, takes it)."""
    close_old_connections()
    return sum(chain.seal_batches(org_id)[0]
               for org_id in chain.orgs_with_unsealed(older_than_seconds=SWEEP_AFTER_SECONDS))


@shared_task(name="audit.run_verification", ignore_result=True)
def run_verification(verification_id: str) -> None:
    """A full re-check of one organization's chain (`POST /v1/audit-events/verifications`), resumable."""
    close_old_connections()
    chain.verification_run(verification_id)


def run_verification_after_commit(verification_id) -> None:
    """Queues the job's task once its row is committed. A broker that cannot take it fails the job at once
    (`error` "not_queued"), so the organization can start another rather than wait for it to go stale."""

    def queue():
        try:
            run_verification.apply_async((str(verification_id),), retry=False)
        except Exception:  # noqa: BLE001 - any broker failure
            logger.warning("audit: verification %s could not be queued", verification_id)
            now = timezone.now()
            AuditVerification.objects.filter(pk=verification_id, status=AuditVerification.QUEUED).update(
                status=AuditVerification.FAILED, error="not_queued", finished_at=now, updated_at=now)

    transaction.on_commit(queue)


@shared_task(name="audit.purge", ignore_result=True)
def purge() -> int:
    """Daily: entries older than AUDIT_RETENTION_DAYS go (docs/api.md#audit-trail)."""
    close_old_connections()
    return chain.purge()
