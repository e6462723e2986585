"""The privacy app's work off the request: the daily retention purge (beat) and erasures, on the `maintenance`
queue, so a long purge never holds up webhook deliveries or e-mail."""

from datetime import timedelta

from celery import shared_task
from django.db import close_old_connections, transaction
from django.utils import timezone

from . import services
from .models import ErasureRequest

QUEUE = "maintenance"
# A request not finished this long after its last change lost its task (a broker outage, a killed worker).
STALE_AFTER = timedelta(minutes=5)


@shared_task(name="privacy.purge_expired_content", ignore_result=True, queue=QUEUE)
def purge_expired_content() -> int:
    """Daily: every organization's expired content goes (privacy.services.retention_purge)."""
    close_old_connections()
    results = services.retention_purge_all()
    return sum(result["transcripts"] + result["recordings"] for result in results.values())


@shared_task(name="privacy.run_erasure", ignore_result=True, queue=QUEUE, acks_late=True)
def run_erasure(request_id: str) -> None:
    """Carries out one erasure request (idempotent: a retry finishes what a dead worker left)."""
    close_old_connections()
    services.erasure_run(request_id=request_id)


def run_erasure_on_commit(request_id) -> None:
    """Enqueues the erasure once the request's transaction commits (its id only: never the number)."""
    transaction.on_commit(lambda: run_erasure.apply_async(args=[str(request_id)], queue=QUEUE))


@shared_task(name="privacy.sweep_erasures", ignore_result=True, queue=QUEUE)
def sweep_erasures() -> int:
    """Beat: enqueues again the requests whose task was lost (unfinished and untouched for a while)."""
    close_old_connections()
    stale = ErasureRequest.objects.exclude(status=ErasureRequest.Status.COMPLETED).filter(
        updated_at__lt=timezone.now() - STALE_AFTER)
    ids = list(stale.values_list("pk", flat=True)[:100])
    for pk in ids:
        run_erasure.apply_async(args=[str(pk)], queue=QUEUE)
    return len(ids)
