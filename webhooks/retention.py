"""The delivery log's retention: attempts, finished deliveries and their events are kept 30 days
(docs/api.md#webhook-delivery).

Run daily by the `webhooks.purge_delivery_log` task. Why batched deletes rather than partitions
(docs/webhooks.md#history-at-scale): the live queue is a small, pending-only part of webhooks_delivery, read through
partial indexes that finished rows are not in, so old rows cost the claim nothing while they exist; what a purge
must not do is hold one long transaction (it would keep vacuum from clearing the queue's own dead rows meanwhile) or
lock a pending row.

Each batch is one short statement in its own transaction that walks a b-tree forward from where the previous batch
stopped (a keyset on `(created_at, id)`: attempts' and events' `created_at` indexes, finished deliveries'
webhooks_delivery_done_created), so it reads its own `batch` index entries and rows only: never the dead rows
earlier batches left behind (vacuum may not have run since; autovacuum is off on some servers), and never the whole
backlog again. A "delete the first N older than the cutoff" statement rereads every earlier batch's dead rows each
time, so its cost grew with what was already deleted (a 10M-row history outlasted 50 minutes; now 2 minutes).
bench.webhook_history measures the claim while the purge runs, and each batch's time.
"""

import time
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

RETENTION = timedelta(days=30)

# Each statement scans the next `batch` rows of its table by (created_at, id) from the previous batch's last one
# (`scan`), deletes those that may go, and returns how many went and where the scan stopped (NULL: nothing left
# before the cutoff). The conditions are repeated on the DELETE itself: if a row changed after the scan read it (a
# manual retry makes a finished delivery pending again), the DELETE waits for that change and re-checks them on the
# new version, so a pending delivery is never deleted. A row the scan skips (pending, or still referenced) is only
# read, never locked.
_PURGE_SQL_TEMPLATE = """
    WITH scan AS MATERIALIZED (
        SELECT id, created_at FROM {table}
         WHERE created_at < %(cutoff)s {walk}
           AND created_at >= %(after_at)s AND (created_at, id) > (%(after_at)s, %(after_id)s)
         ORDER BY created_at, id LIMIT %(batch)s
    ), gone AS (
        DELETE FROM {table} AS t USING scan WHERE t.id = scan.id {may_go} RETURNING 1
    )
    SELECT (SELECT count(*) FROM gone), last.created_at, last.id
      FROM (SELECT 1) AS one
      LEFT JOIN (SELECT * FROM scan ORDER BY created_at DESC, id DESC LIMIT 1) AS last ON true
"""
_PURGE_SQL = {
    name: _PURGE_SQL_TEMPLATE.format(table=table, walk=walk, may_go=may_go)
    for name, table, walk, may_go in (
        # Attempts and events by their created_at b-trees (OrgOwnedModel's).
        ("attempts", "webhooks_deliveryattempt", "", ""),
        # Finished deliveries by webhooks_delivery_done_created, which holds no pending row. One goes once it has no
        # attempt left (an old delivery retried by hand lately keeps its log).
        ("deliveries", "webhooks_delivery", "AND status <> 'pending'", """
            AND t.status <> 'pending'
            AND NOT EXISTS (SELECT 1 FROM webhooks_deliveryattempt AS a WHERE a.delivery_id = t.id)"""),
        # An event goes once no delivery is left (its pending ones keep it).
        ("events", "webhooks_event", "",
         "AND NOT EXISTS (SELECT 1 FROM webhooks_delivery AS d WHERE d.event_id = t.id)"),
    )
}
# Where each walk starts: before any row (ids are uuids, events' are text; both sort after these).
_START = {"attempts": "00000000-0000-0000-0000-000000000000", "deliveries": "00000000-0000-0000-0000-000000000000",
          "events": ""}
_EPOCH = "-infinity"


def delivery_log_purge(*, now=None, batch: int = 5000, pause: float = 0.0, on_batch=None) -> int:
    """Deletes what docs/api.md#webhook-delivery keeps for 30 days only: attempts older than that, finished
    deliveries left without attempts and the events left without any delivery. Pending deliveries and their events
    are never touched (nothing is lost). Each batch reads at most `batch` rows of one table and is its own short
    transaction, `pause` seconds apart, so a large backlog never holds long locks nor keeps vacuum from the live
    queue. `on_batch(table, (created_at, id) the scan stopped at or None at the end, deleted, seconds)` is called
    after each (the bench's per-batch times).
    Returns how many attempts went."""
    cutoff = (now or timezone.now()) - RETENTION
    purged = 0
    for table, sql in _PURGE_SQL.items():
        after_at, after_id = _EPOCH, _START[table]
        while True:
            started = time.perf_counter()
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(sql, {"cutoff": cutoff, "batch": batch, "after_at": after_at, "after_id": after_id})
                deleted, last_at, last_id = cursor.fetchone()
            if on_batch:
                on_batch(table, last_at and (last_at, last_id), deleted, time.perf_counter() - started)
            if table == "attempts":
                purged += deleted
            if last_at is None:
                break
            after_at, after_id = last_at, last_id
            if pause:
                time.sleep(pause)
    return purged
