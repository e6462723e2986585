"""The delivery log keeps 30 days: older attempts, finished deliveries and their events go; pending ones stay."""

import re
import uuid
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from tests.support.webhooks import make_attempt, make_delivery, make_subscription
from webhooks.models import Delivery, DeliveryAttempt, Event
from webhooks.retention import _PURGE_SQL, delivery_log_purge
from webhooks.services import emit


def _age(queryset, days):
    queryset.update(created_at=timezone.now() - timedelta(days=days))


def _attempt(delivery, **fields):
    return DeliveryAttempt.objects.create(
        organization_id=delivery.organization_id, delivery=delivery, number=1, status_code=500, **fields
    )


def test_old_attempts_and_finished_deliveries_go_and_pending_ones_stay(org, settings):
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
    make_subscription(org, url="http://127.0.0.1:9/hook")
    old_done, old_pending, young = (emit(org=org, type="call.ended", data={"n": n}) for n in range(3))
    done = Delivery.objects.get(event=old_done)
    Delivery.objects.filter(pk=done.pk).update(status=Delivery.Status.SUCCEEDED)
    pending = Delivery.objects.get(event=old_pending)
    kept_attempt = _attempt(Delivery.objects.get(event=young))
    for delivery in (done, pending):
        _attempt(delivery)
    _age(DeliveryAttempt.objects.exclude(pk=kept_attempt.pk), 31)
    _age(Delivery.objects.filter(event__in=[old_done, old_pending]), 31)
    _age(Event.objects.filter(pk__in=[old_done.pk, old_pending.pk]), 31)

    assert delivery_log_purge() == 2

    assert list(DeliveryAttempt.objects.all()) == [kept_attempt]
    assert not Delivery.objects.filter(pk=done.pk).exists()
    assert not Event.objects.filter(pk=old_done.pk).exists()
    assert Delivery.objects.filter(pk=pending.pk).exists()  # still owed to its receiver
    assert Event.objects.filter(pk__in=[old_pending.pk, young.pk]).count() == 2


def test_nothing_younger_than_30_days_goes(org, settings):
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
    make_subscription(org, url="http://127.0.0.1:9/hook")
    event = emit(org=org, type="call.ended", data={})
    delivery = Delivery.objects.get(event=event)
    Delivery.objects.filter(pk=delivery.pk).update(status=Delivery.Status.FAILED)
    _attempt(delivery)
    _age(DeliveryAttempt.objects.all(), 29)
    assert delivery_log_purge() == 0
    assert DeliveryAttempt.objects.count() == 1 and Delivery.objects.count() == 1 and Event.objects.count() == 1


def test_a_backlog_larger_than_a_batch_goes_in_several_batches(org, settings):
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
    make_subscription(org, url="http://127.0.0.1:9/hook")
    events = [emit(org=org, type="call.ended", data={"n": n}) for n in range(5)]
    Delivery.objects.update(status=Delivery.Status.SUCCEEDED)
    for delivery in Delivery.objects.all():
        _attempt(delivery)
    _age(DeliveryAttempt.objects.all(), 31)
    _age(Delivery.objects.all(), 31)
    _age(Event.objects.filter(pk__in=[e.pk for e in events]), 31)
    assert delivery_log_purge(batch=2) == 5  # 2, 2 and 1 attempts; then deliveries and events likewise
    assert not DeliveryAttempt.objects.exists() and not Delivery.objects.exists() and not Event.objects.exists()


def test_a_purge_in_small_batches_keeps_pending_deliveries_young_rows_and_a_recent_retrys_log(org):
    """Whatever the batch boundaries fall on: a pending delivery (however old, its old attempts go), a delivery
    retried by hand lately (its recent attempt and so itself), and everything younger than 30 days stay."""
    sub = make_subscription(org)
    old = timezone.now() - timedelta(days=40)
    finished = [make_delivery(org, sub, status=Delivery.Status.SUCCEEDED) for _ in range(7)]
    pending = [make_delivery(org, sub, status=Delivery.Status.PENDING) for _ in range(3)]
    retried = make_delivery(org, sub, status=Delivery.Status.FAILED)
    young = make_delivery(org, sub, status=Delivery.Status.SUCCEEDED)
    for delivery in [*finished, *pending, retried]:
        make_attempt(org, delivery, 1, 500, at=old)
    recent_retry = make_attempt(org, retried, 2, 200)  # now: a manual retry of an old delivery
    young_attempt = make_attempt(org, young, 1, 200)
    # Interleaved in time, so that batches of 3 mix rows that go with rows that stay.
    for n, delivery in enumerate([*finished, *pending, retried]):
        Delivery.objects.filter(pk=delivery.pk).update(created_at=old + timedelta(minutes=n))
        Event.objects.filter(pk=delivery.event_id).update(created_at=old + timedelta(minutes=n))
    batches = []

    purged = delivery_log_purge(batch=3, on_batch=lambda *args: batches.append(args))

    assert purged == 11  # the old attempts of the finished, the pending and the retried deliveries
    assert set(DeliveryAttempt.objects.values_list("pk", flat=True)) == {recent_retry.pk, young_attempt.pk}
    assert set(Delivery.objects.values_list("pk", flat=True)) == {d.pk for d in [*pending, retried, young]}
    assert set(Event.objects.values_list("pk", flat=True)) == {d.event_id for d in [*pending, retried, young]}
    assert Delivery.objects.filter(pk__in=[d.pk for d in pending], status=Delivery.Status.PENDING).count() == 3
    # Bounded batches: none deleted more than 3 rows, and each table's walk only went forward, by (created_at, id):
    # the old attempts share one created_at, so batch boundaries fall within it.
    assert all(deleted <= 3 for _, _, deleted, _ in batches)
    for table in ("attempts", "deliveries", "events"):
        marks = [until for name, until, _, _ in batches if name == table]
        assert marks[-1] is None  # the walk ends when nothing is left before the cutoff
        assert marks[:-1] == sorted(marks[:-1]) and len(set(marks[:-1])) == len(marks) - 1
    assert len([b for b in batches if b[0] == "attempts"]) == 11 // 3 + 2  # 3, 3, 3, 2, then the empty end


def test_each_purge_batch_reads_the_created_at_index_from_where_the_last_one_stopped(org):
    """The plan behind the bounded batches (docs/webhooks.md#history-at-scale): an index range scan of created_at
    from the previous batch's last row, in order, with a LIMIT: never a sort nor a scan of the whole backlog, so a
    batch costs the same whatever earlier batches left dead."""
    sub = make_subscription(org)
    for _ in range(20):
        make_attempt(org, make_delivery(org, sub, status=Delivery.Status.SUCCEEDED), 1, 200)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE webhooks_delivery, webhooks_deliveryattempt, webhooks_event")
        # Tiny tables: a sequential or bitmap scan and a sort would be the cheapest plan here (as the tests of the
        # claim's and the stats' plans do), so they are off: what is held is that the statement can be an ordered
        # range scan with a LIMIT, and that the index it needs is there.
        cursor.execute("SET enable_seqscan = off")
        cursor.execute("SET enable_bitmapscan = off")
        cursor.execute("SET enable_sort = off")  # a full sort, that is: an incremental one (ties) stays on
        plans = []
        for sql in _PURGE_SQL.values():
            params = {"cutoff": timezone.now(), "batch": 5000, "after_at": timezone.now() - timedelta(days=60),
                      "after_id": uuid.UUID(int=0) if "event" not in sql.split("DELETE FROM")[1][:30] else ""}
            cursor.execute("EXPLAIN " + sql, params)
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
        cursor.execute("RESET enable_seqscan")
        cursor.execute("RESET enable_bitmapscan")
        cursor.execute("RESET enable_sort")
    indexes = ("webhooks_deliveryattempt_created_at_", "webhooks_delivery_done_created", "webhooks_event_created_at_")
    for plan, table, index in zip(
        plans, ("webhooks_deliveryattempt", "webhooks_delivery", "webhooks_event"), indexes, strict=True
    ):
        # An index-only scan of it is the same ordered range (alone in a fresh database the planner takes one).
        assert re.search(rf"Index (Only )?Scan using {index}\w* on {table}\b", plan), plan
        assert not re.search(r"->  Sort\b", plan.split("CTE gone")[0]), plan  # an incremental sort (ties) at most
