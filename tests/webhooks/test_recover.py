"""Recover re-queues a subscription's failed deliveries since a time, and counts and enqueues exactly the rows it
reset: a delivery changed by another transaction meanwhile is neither counted nor enqueued."""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from tests.support.webhooks import make_delivery, make_subscription
from webhooks import services
from webhooks.models import Delivery
from webhooks.tasks import publisher


@pytest.fixture
def enqueued(monkeypatch):
    calls = []
    monkeypatch.setattr(publisher, "publish", lambda ids, **kw: calls.append(sorted(map(str, ids))))
    return calls


def test_recover_requeues_only_failed_deliveries_of_that_subscription_since_the_time(org, enqueued):
    sub, other = make_subscription(org), make_subscription(org)
    failed = make_delivery(org, sub)
    old = make_delivery(org, sub)
    Delivery.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=3))
    for status in ("succeeded", "pending"):
        make_delivery(org, sub, status=status)
    make_delivery(org, other)  # another subscription's
    Delivery.objects.filter(pk=failed.pk).update(attempt_count=10, claim_token=None)
    with transaction.atomic():
        count = services.deliveries_recover(subscription=sub, since=timezone.now() - timedelta(days=1))
    assert count == 1
    failed.refresh_from_db()
    assert (failed.status, failed.attempt_count, failed.next_trigger) == ("pending", 0, "manual")
    assert Delivery.objects.get(pk=old.pk).status == "failed"


@pytest.mark.django_db(transaction=True)
def test_a_delivery_changed_while_recover_runs_is_neither_counted_nor_enqueued(org, enqueued):
    """Another transaction (a manual retry) has made D2 pending, uncommitted, when recover runs; it commits while
    recover waits for D2's row lock. Recover must reset, count and enqueue D1 only."""
    sub = make_subscription(org)
    d1, d2 = make_delivery(org, sub), make_delivery(org, sub)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        [main_pid] = cursor.fetchone()
    changed, problems = threading.Event(), []

    def retry_elsewhere():
        from django.db import connection as conn

        try:
            with transaction.atomic():
                Delivery.objects.filter(pk=d2.pk).update(status="pending", next_trigger="manual")
                changed.set()
                deadline = time.monotonic() + 10
                with conn.cursor() as cursor:
                    while True:  # commit only once recover is blocked on our row lock
                        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [main_pid])
                        if cursor.fetchone()[0] == "Lock":
                            break
                        if time.monotonic() > deadline:
                            problems.append("recover never waited for the row lock")
                            break
                        time.sleep(0.02)
        finally:
            changed.set()
            conn.close()

    thread = threading.Thread(target=retry_elsewhere)
    thread.start()
    assert changed.wait(10)
    count = services.deliveries_recover(subscription=sub, since=timezone.now() - timedelta(days=1))
    thread.join(15)
    assert problems == []
    assert count == 1
    assert enqueued == [[str(d1.pk)]]
    assert Delivery.objects.get(pk=d1.pk).status == "pending"
    assert (Delivery.objects.get(pk=d2.pk).status, Delivery.objects.get(pk=d2.pk).attempt_count) == ("pending", 0)
