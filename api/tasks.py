"""Beat tasks of the interface layer: the daily purge of stored Idempotency-Key answers older than 24 hours."""

from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from .models import IdempotencyKey

KEPT_FOR = timedelta(hours=24)


def idempotency_keys_purge(*, now=None, batch: int = 5000) -> int:
    """Deletes stored answers older than KEPT_FOR, in batches (no long locks). Returns how many went."""
    cutoff = (now or timezone.now()) - KEPT_FOR
    purged = 0
    while True:
        ids = list(IdempotencyKey.objects.filter(created_at__lt=cutoff).values_list("pk", flat=True)[:batch])
        if not ids:
            return purged
        purged += IdempotencyKey.objects.filter(pk__in=ids).delete()[0]


@shared_task(name="api.purge_idempotency_keys", ignore_result=True)
def purge_idempotency_keys() -> int:
    return idempotency_keys_purge()
