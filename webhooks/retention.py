"""The delivery log's retention: attempts, finished deliveries and their events are kept 30 days
(docs/api.md#webhook-delivery).

Run daily by the `webhooks.purge_delivery_log` task. Why batched deletes rather than partitions
(docs/webhooks.md#history-at-scale): the live queue is a small, pending-only part of webhooks_delivery, read through
partial indexes that finished rows are not in, so old rows cost the claim nothing while they exist; what a purge
must not do is hold one long transaction (it would keep vacuum from clearing the queue's own dead rows meanwhile) or
lock a pending row. Each batch here is one short statement in its own transaction, found by a BRIN index on
`created_at` (a few pages per table, nothing to maintain on insert beyond a range summary), and never touches a
pending delivery. bench.webhook_history measures the claim while the purge runs.
"""

import time
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

RETENTION = timedelta(days=30)

# Each statement deletes at most %(batch)s rows, oldest block ranges first (the BRIN index), and commits on its own.
_PURGE_ATTEMPTS_SQL = """
    DELETE FROM webhooks_deliveryattempt WHERE id IN (
        SELECT id FROM webhooks_deliveryattempt WHERE created_at < %(cutoff)s LIMIT %(batch)s
    )
"""
# A finished delivery goes once it has no attempt left (an old delivery retried by hand lately keeps its log).
_PURGE_DELIVERIES_SQL = """
    DELETE FROM webhooks_delivery WHERE id IN (
        SELECT d.id FROM webhooks_delivery AS d
         WHERE d.created_at < %(cutoff)s AND d.status <> 'pending'
           AND NOT EXISTS (SELECT 1 FROM webhooks_deliveryattempt AS a WHERE a.delivery_id = d.id)
         LIMIT %(batch)s
    )
"""
_PURGE_EVENTS_SQL = """
    DELETE FROM webhooks_event WHERE id IN (
        SELECT e.id FROM webhooks_event AS e
         WHERE e.created_at < %(cutoff)s
           AND NOT EXISTS (SELECT 1 FROM webhooks_delivery AS d WHERE d.event_id = e.id)
         LIMIT %(batch)s
    )
"""


def delivery_log_purge(*, now=None, batch: int = 5000, pause: float = 0.0) -> int:
    """Deletes what docs/api.md#webhook-delivery keeps for 30 days only: attempts older than that, finished
    deliveries left without attempts and the events left without any delivery. Pending deliveries and their events
    are never touched (nothing is lost). Each batch of at most `batch` rows is its own short transaction, `pause`
    seconds apart, so a large backlog never holds long locks nor keeps vacuum from the live queue. Returns how many
    attempts went."""
    cutoff = (now or timezone.now()) - RETENTION
    purged = 0
    for sql in (_PURGE_ATTEMPTS_SQL, _PURGE_DELIVERIES_SQL, _PURGE_EVENTS_SQL):
        while True:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(sql, {"cutoff": cutoff, "batch": batch})
                deleted = cursor.rowcount
            if sql is _PURGE_ATTEMPTS_SQL:
                purged += deleted
            if deleted < batch:
                break
            if pause:
                time.sleep(pause)
    return purged
