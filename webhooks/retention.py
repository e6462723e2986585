"""The delivery log's retention: attempts, finished deliveries and their events are kept 30 days
(docs/api.md#webhook-delivery).

Run daily by the `webhooks.purge_delivery_log` task.
"""

from datetime import timedelta

from django.utils import timezone

from .models import Delivery, DeliveryAttempt, Event

RETENTION = timedelta(days=30)


def delivery_log_purge(*, now=None, batch: int = 5000) -> int:
    """Deletes what docs/api.md#webhook-delivery keeps for 30 days only: attempts older than that, finished
    deliveries and the events left without any delivery. Pending deliveries and their events are never touched
    (nothing is lost). Works in batches so a large backlog never holds long locks. Returns how many attempts went."""
    cutoff = (now or timezone.now()) - RETENTION
    purged = 0
    while True:
        ids = list(DeliveryAttempt.objects.filter(created_at__lt=cutoff).values_list("pk", flat=True)[:batch])
        if not ids:
            break
        purged += DeliveryAttempt.objects.filter(pk__in=ids).delete()[0]
    finished = Delivery.objects.filter(created_at__lt=cutoff).exclude(status=Delivery.Status.PENDING)
    finished.filter(attempts__isnull=True).delete()
    Event.objects.filter(created_at__lt=cutoff, deliveries__isnull=True).delete()
    return purged
