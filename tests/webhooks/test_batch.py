"""The batch path: one task claims several deliveries in one UPDATE, POSTs them concurrently and records every
result in one transaction. Each attempt is still sent once, logged once, and moved on by its own outcome."""

import time
import uuid
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.outbox import broker_queue_length
from tests.support.celery_worker import RedisServer, use_broker
from tests.support.database import connect
from tests.support.races import run_together
from tests.support.receiver import Receiver
from tests.support.waiting import wait_until
from tests.support.webhooks import make_subscription
from webhooks.delivery import record_batch, send_batch
from webhooks.delivery.claim import claim
from webhooks.models import Delivery, DeliveryAttempt, Subscription
from webhooks.services import emit
from webhooks.tasks import deliver_batch, publisher
from webhooks.transport import Outcome

pytestmark = pytest.mark.usefixtures("allow_local")


def emit_n(org, n):
    for i in range(n):
        emit(org=org, type="call.ended", data={"call_id": f"c-{i}"})


def test_a_duplicate_batch_run_sends_each_delivery_once(org):
    with Receiver(status=200) as receiver:
        make_subscription(org, url=receiver.url)
        emit_n(org, 5)
        ids = [str(pk) for pk in Delivery.objects.values_list("pk", flat=True)]
        assert set(send_batch(ids).values()) == {"succeeded"}
        assert set(send_batch(ids).values()) == {"skipped"}
        assert sorted(c["headers"]["webhook-id"] for c in receiver.calls) == sorted(
            Delivery.objects.values_list("event_id", flat=True)
        )
    assert DeliveryAttempt.objects.count() == 5
    assert set(Delivery.objects.values_list("status", "attempt_count", "claim_token")) == {("succeeded", 1, None)}


def test_a_batch_with_mixed_outcomes_records_each_correctly(org, admin):
    with Receiver(status=204) as ok, Receiver(status=500) as broken, Receiver(status=410) as gone:
        s_ok = make_subscription(org, url=ok.url)
        s_broken = make_subscription(org, url=broken.url)
        s_gone = make_subscription(org, url=gone.url)
        s_off = make_subscription(org, url=ok.url)
        emit(org=org, type="call.ended", data={})  # one event, one delivery per subscription
        Subscription.objects.filter(pk=s_off.pk).update(enabled=False)
        by_sub = {d.subscription_id: d for d in Delivery.objects.all()}
        before = timezone.now()
        results = send_batch([str(d.pk) for d in by_sub.values()])
        assert len(ok.calls) == 1 and len(broken.calls) == 1 and len(gone.calls) == 1
    assert {sub: results[str(d.pk)] for sub, d in by_sub.items()} == {
        s_ok.pk: "succeeded", s_broken.pk: "retry", s_gone.pk: "failed", s_off.pk: "disabled",
    }
    rows = {d.subscription_id: d for d in Delivery.objects.all()}
    assert (rows[s_ok.pk].status, rows[s_ok.pk].last_status_code, rows[s_ok.pk].next_attempt_at) == (
        "succeeded", 204, None)
    assert (rows[s_broken.pk].status, rows[s_broken.pk].last_error, rows[s_broken.pk].attempt_count) == (
        "pending", "HTTP 500", 1)
    assert before + timedelta(seconds=5) <= rows[s_broken.pk].next_attempt_at <= timezone.now() + timedelta(seconds=6)
    assert (rows[s_gone.pk].status, rows[s_gone.pk].last_status_code) == ("failed", 410)
    assert (rows[s_off.pk].status, rows[s_off.pk].attempt_count) == ("failed", 0)
    assert all(r.claim_token is None and r.claimed_until is None for r in rows.values())
    attempts = {a.delivery.subscription_id: a for a in DeliveryAttempt.objects.select_related("delivery")}
    assert {sub: (a.number, a.status_code, a.error) for sub, a in attempts.items()} == {
        s_ok.pk: (1, 204, ""), s_broken.pk: (1, 500, "HTTP 500"), s_gone.pk: (1, 410, "HTTP 410"),
    }
    subs = {s.pk: s for s in Subscription.objects.all()}
    assert subs[s_ok.pk].last_success_at is not None and subs[s_ok.pk].failing_since is None
    assert subs[s_broken.pk].failing_since is not None and subs[s_broken.pk].enabled
    assert subs[s_gone.pk].enabled is False and "410" in subs[s_gone.pk].disabled_reason


def test_a_row_claimed_away_after_its_lease_ran_out_is_logged_but_left_to_its_new_holder(org):
    sub = make_subscription(org)
    emit_n(org, 2)
    token, rows = claim(list(Delivery.objects.values_list("pk", flat=True)))
    claimed = [row[0] for row in rows]
    assert len(claimed) == 2
    deliveries = list(Delivery.objects.select_related("subscription").filter(pk__in=claimed).order_by("pk"))
    other = uuid.uuid4()
    Delivery.objects.filter(pk=deliveries[1].pk).update(claim_token=other)  # another worker's claim now
    ok = Outcome(200, "", "", 5)
    assert record_batch(token, [(d, ok) for d in deliveries]) == {deliveries[0].pk: "succeeded",
                                                                   deliveries[1].pk: "stale"}
    assert Delivery.objects.get(pk=deliveries[1].pk).claim_token == other
    assert DeliveryAttempt.objects.count() == 2
    assert sub.pk


def test_a_task_also_takes_other_due_deliveries_whose_own_tasks_then_skip(org):
    with Receiver() as receiver:
        make_subscription(org, url=receiver.url)
        emit_n(org, 4)
        first, *others = Delivery.objects.order_by("created_at")
        Delivery.objects.filter(pk=others[-1].pk).update(next_attempt_at=timezone.now() + timedelta(minutes=5))
        results = send_batch([str(first.pk)], extra=10)
        assert results == {str(d.pk): "succeeded" for d in [first, *others[:-1]]}
        assert len(receiver.calls) == 3  # the future one is not due
        assert set(send_batch([str(d.pk) for d in others]).values()) == {"skipped"}
        assert len(receiver.calls) == 3


@pytest.fixture
def published(monkeypatch):
    """What the webhook publisher puts on the broker (each task's ids), from a fresh coalescing window."""
    sent = []
    monkeypatch.setattr("webhooks.tasks.deliver_batch.apply_async", lambda args, **kw: sent.append(args[0]))
    monkeypatch.setattr(publisher, "down_until", 0.0)
    monkeypatch.setattr(publisher, "_coalescer", None)
    return sent


def _wait_for(sent, count):
    wait_until(lambda: len(sent) >= count, 5, lambda: f"{count} tasks published, got {sent}", interval=0.01)


def test_enqueue_puts_batches_of_the_configured_size_on_the_broker(settings, published):
    settings.WEBHOOK_BATCH_SIZE = 2
    sent = published
    assert publisher.publish(["a", "b", "c", "d", "e"]) == 5
    assert sent == [["a", "b"], ["c", "d"], ["e"]]


def test_single_commits_in_quick_succession_are_published_together(settings, published):
    settings.WEBHOOK_BATCH_SIZE = 20
    settings.WEBHOOK_ENQUEUE_WINDOW_SECONDS = 0.3
    sent = published
    assert publisher.publish(["a"]) == 1
    assert sent == [["a"]]  # a quiet moment: published at once
    for pk in ("b", "c", "d"):
        assert publisher.publish([pk]) == 1
    assert sent == [["a"]]
    _wait_for(sent, 2)
    assert sent == [["a"], ["b", "c", "d"]]  # at the end of the window, one task


def test_a_window_that_fills_a_batch_is_published_without_waiting_for_its_end(settings, published):
    settings.WEBHOOK_BATCH_SIZE = 3
    settings.WEBHOOK_ENQUEUE_WINDOW_SECONDS = 30
    sent = published
    for pk in ("a", "b", "c", "d"):
        publisher.publish([pk])
    _wait_for(sent, 2)
    assert sent == [["a"], ["b", "c", "d"]]  # a full batch: out long before the 30 s window ends
    publisher.publish(["e"])
    time.sleep(0.2)
    assert sent == [["a"], ["b", "c", "d"]]  # less than a batch waits for the window (or for two more)
    publisher.flush()  # nothing left buffered for a later test's broker
    assert sent == [["a"], ["b", "c", "d"], ["e"]]


@pytest.mark.django_db(transaction=True)
def test_two_workers_running_the_same_batch_at_once_send_each_delivery_once(org):
    with Receiver(delay=0.2) as receiver:
        make_subscription(org, url=receiver.url)
        with transaction.atomic():
            emit_n(org, 10)
        ids = [str(pk) for pk in Delivery.objects.values_list("pk", flat=True)]
        results = run_together(*[lambda: send_batch(ids, extra=5)] * 3)
        ids_sent = [c["headers"]["webhook-id"] for c in receiver.calls]
    assert len(ids_sent) == len(set(ids_sent)) == 10
    assert sum(r == "succeeded" for result in results for r in result.values()) == 10
    assert DeliveryAttempt.objects.count() == 10
    assert set(Delivery.objects.values_list("status", flat=True)) == {"succeeded"}


def test_a_post_that_could_outlive_the_lease_is_not_started_and_its_claim_is_given_back(org, monkeypatch):
    monkeypatch.setattr("webhooks.delivery.send._start_window", lambda: -1.0)  # every POST would start too late
    with Receiver() as receiver:
        make_subscription(org, url=receiver.url)
        emit_n(org, 3)
        ids = [str(pk) for pk in Delivery.objects.values_list("pk", flat=True)]
        assert set(send_batch(ids).values()) == {"skipped"}
        assert receiver.calls == []
    assert not DeliveryAttempt.objects.exists()
    rows = list(Delivery.objects.values_list("status", "attempt_count", "claim_token", "claimed_until"))
    assert set(rows) == {("pending", 0, None, None)}
    monkeypatch.undo()
    with Receiver() as receiver:
        Subscription.objects.update(url=receiver.url)
        assert set(send_batch(ids).values()) == {"succeeded"}  # still due: the next batch sends them


PUBLISH_THEN_EXIT = """
import atexit, json, threading, time
sent, started = [], threading.Event()
atexit.register(lambda: print(json.dumps(sent)))  # exit handlers run last first: this one after the outbox's
import django
django.setup()
from webhooks import tasks

def slow_broker(args, **kwargs):  # a first connection to the broker takes a while
    started.set()
    time.sleep(0.5)
    sent.append(args[0])

tasks.deliver_batch.apply_async = slow_broker
tasks.publisher.publish(["a", "b"], background=True)
started.wait(5)  # the publishing thread is in the middle of its send: the process ends now
"""


def test_a_process_that_exits_while_a_publish_is_in_flight_waits_for_it():
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run([sys.executable, "-c", PUBLISH_THEN_EXIT], cwd=Path(__file__).resolve().parents[2],
                          env={**os.environ, "DJANGO_SETTINGS_MODULE": "voiceagent.settings"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [["a", "b"]]


def test_a_fair_run_refills_in_the_round_trip_that_records_its_successes(org, settings):
    """A task's refill claim rides in the query that records its finished POSTs (one round trip per refill, not
    two): in a healthy drain, every claim after the first is part of a record."""
    settings.WEBHOOK_SEND_THREADS = 2
    with Receiver() as receiver:
        make_subscription(org, url=receiver.url)
        emit_n(org, 12)
        with CaptureQueriesContext(connection) as queries:
            results = send_batch([], extra=2)
        assert sorted(results.values()) == ["succeeded"] * 12
        assert len(receiver.ids_answered_ok()) == 12
    claims = [q["sql"] for q in queries.captured_queries if "EXECUTE webhooks_claim_fair" in q["sql"]]
    alone = [sql for sql in claims if "INSERT INTO webhooks_deliveryattempt" not in sql]
    assert len(alone) == 1 and len(claims) >= 6, claims  # 12 deliveries, at most 2 at a time


@pytest.mark.django_db(transaction=True)
def test_the_health_write_of_an_all_success_batch_rides_in_the_query_that_records_it(org):
    """A slowed-down, failing endpoint's first 2xx gives it its full share back; in a healthy drain (a worker's task,
    outside any transaction) that write is part of the record's round trip (it was a query of its own per batch:
    6.6% of a worker's busy time, py-spy)."""
    with Receiver() as receiver:
        sub = make_subscription(org, url=receiver.url)
        Subscription.objects.filter(pk=sub.pk).update(failing_since=timezone.now(), in_flight_limit=1,
                                                      slowed_reason="The endpoint timed out.")
        emit_n(org, 3)
        with CaptureQueriesContext(connection) as queries:
            results = send_batch([], extra=4)
    assert sorted(results.values()) == ["succeeded"] * 3
    sub.refresh_from_db()
    assert (sub.failing_since, sub.in_flight_limit, sub.slowed_reason) == (None, None, "")
    assert sub.last_success_at is not None
    health = [q["sql"] for q in queries.captured_queries if "SET last_success_at" in q["sql"]]
    assert health and all("INSERT INTO webhooks_deliveryattempt" in sql for sql in health), health


@pytest.fixture
def queued_tasks(monkeypatch):
    """The (ids, task id) of every deliver_batch task published, in order; the broker holds exactly these."""
    queued = []
    monkeypatch.setattr("webhooks.tasks.deliver_batch.apply_async",
                        lambda args, task_id, **kw: queued.append((args[0], task_id)))
    monkeypatch.setattr(publisher, "_coalescer", None)
    monkeypatch.setattr(publisher.waiting, "queued", lambda: len(queued))
    return queued


def test_no_task_is_published_while_enough_wait_on_the_broker_but_the_sweep_always_publishes(settings, monkeypatch,
                                                                                             queued_tasks):
    """Every task claims any due deliveries, so while WEBHOOK_MAX_WAITING_TASKS of them wait, another adds nothing
    (a burst used to queue a task per commit window, drained as no-ops after the backlog). A started task makes
    room; a task not started within a minute (lost, or stuck) stops counting, and so does the count when the broker's
    queue does not hold that many (purged); the sweep, the safety net, is never spared."""
    settings.WEBHOOK_MAX_WAITING_TASKS = 2
    settings.WEBHOOK_BATCH_SIZE = 1
    queued = queued_tasks
    assert publisher.publish(["a", "b", "c"], now=True) == 3
    assert [ids for ids, _ in queued] == [["a"], ["b"]]  # "c" is taken by either task waiting
    publisher.waiting.started(queued[0][1])
    publisher.publish(["d", "e"], now=True)
    assert [ids for ids, _ in queued][2:] == [["d"]]
    monkeypatch.setattr(publisher.waiting, "queued", lambda: 0)  # purged: whatever was counted is gone
    publisher.publish(["e2"], now=True)
    assert [ids for ids, _ in queued][3:] == [["e2"]]
    monkeypatch.setattr(publisher.waiting, "queued", lambda: 99)
    monkeypatch.setattr(publisher.waiting, "max_age", 0.2)
    time.sleep(0.3)
    publisher.publish(["f", "g", "h"], now=True)
    assert [ids for ids, _ in queued][4:] == [["f"], ["g"]]
    monkeypatch.setattr("core.outbox.take_due", lambda due, **kw: ["i", "j"])
    assert publisher.sweep() == 2
    assert [ids for ids, _ in queued][6:] == [["i", "j"]]  # never spared, in one task: two wait already


def test_the_waiting_tasks_are_counted_on_the_broker_itself():
    """WaitingTasks trusts its own count only as far as the broker's queue holds that many messages: that length is
    read from the real Redis broker. It was None on every call (the read raised on a task with no `queue` of its
    own), so nothing was ever spared."""
    redis = RedisServer().start()
    try:
        with use_broker(redis.url):
            assert broker_queue_length(deliver_batch) == 0
            for _ in range(3):
                deliver_batch.apply_async(([],), retry=False)
            assert broker_queue_length(deliver_batch) == 3
            assert publisher.waiting.queued() == 3
    finally:
        redis.stop()


def test_the_sweep_publishes_as_many_tasks_as_there_is_room_for_beside_those_waiting(settings, monkeypatch,
                                                                                     queued_tasks):
    """After an outage the sweep finds a backlog: one task per batch of it drained the backlog with the first few
    and left the rest to start, find nothing and stop (a tail of ~12% of the drain). Every task claims any due
    delivery, so the sweep's ids go to as many tasks as WEBHOOK_MAX_WAITING_TASKS leaves room for (at least one), in
    bigger batches; without a limit, one task per batch as before."""
    settings.WEBHOOK_MAX_WAITING_TASKS = 4
    settings.WEBHOOK_BATCH_SIZE = 10
    queued = queued_tasks
    backlog = [f"d{n}" for n in range(100)]
    monkeypatch.setattr("core.outbox.take_due", lambda due, **kw: backlog)
    assert publisher.sweep() == 100
    assert [len(ids) for ids, _ in queued] == [25, 25, 25, 25]
    assert sorted(i for ids, _ in queued for i in ids) == sorted(backlog)  # every row in a task
    publisher.waiting.started(queued[0][1])
    assert publisher.sweep() == 100
    assert [len(ids) for ids, _ in queued][4:] == [100]  # three still wait: room for one, never none
    monkeypatch.setattr(publisher.waiting, "queued", lambda: 0)  # purged: what was counted is gone
    assert publisher.sweep() == 100
    assert [len(ids) for ids, _ in queued][5:] == [25, 25, 25, 25]
    settings.WEBHOOK_MAX_WAITING_TASKS = 0  # nothing spared, nothing bounded
    assert publisher.sweep() == 100
    assert [len(ids) for ids, _ in queued][9:] == [10] * 10


@pytest.mark.django_db(transaction=True)
def test_the_health_write_skips_a_subscription_another_worker_holds_instead_of_waiting(org):
    """Health writes of concurrent records must never wait on each other's row locks (two multi-row UPDATEs locking
    in different orders deadlocked): a held row is skipped, the others are written."""
    from webhooks.delivery.record import _mark_healthy

    held, free = make_subscription(org), make_subscription(org)
    Subscription.objects.filter(pk__in=[held.pk, free.pk]).update(in_flight_limit=1, slowed_reason="x")
    with connect() as holder:
        holder.execute("SELECT id FROM webhooks_subscription WHERE id = %s FOR UPDATE", [held.pk])
        outcome = run_together(lambda: _mark_healthy([held.pk, free.pk], timezone.now()), timeout=10)[0]
        assert not isinstance(outcome, Exception), outcome
    assert Subscription.objects.get(pk=free.pk).in_flight_limit is None
    assert Subscription.objects.get(pk=held.pk).in_flight_limit == 1
