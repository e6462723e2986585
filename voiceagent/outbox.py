"""The sweep both outboxes share (webhook deliveries, notification e-mails): take due rows once."""

from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone


def take_due(due, *, reenqueue_after_seconds: float, limit: int) -> list[str]:
    """Ids of rows in `due` (a queryset already filtered to pending, due rows) that no sweep enqueued in the last
    `reenqueue_after_seconds`, stamped `enqueued_at` now.

    SELECT ... FOR UPDATE SKIP LOCKED: a row being worked on, or taken by an overlapping sweep, is skipped, so
    two sweepers never enqueue one row twice; a row whose enqueue the broker lost is taken again once stale.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=reenqueue_after_seconds)
    with transaction.atomic():
        ids = list(
            due.select_for_update(skip_locked=True)
            .filter(Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=stale))
            .order_by("next_attempt_at")
            .values_list("pk", flat=True)[:limit]
        )
        if ids:
            due.model.objects.filter(pk__in=ids).update(enqueued_at=now)
    return [str(pk) for pk in ids]
