"""Fair delivery with real Celery workers and real receivers on loopback (docs/webhooks.md#fair-delivery): one
tenant's hanging endpoint does not delay another's deliveries, a subscription's in-flight limit holds across worker
processes, and a rate cap holds over every 10-second window with several worker processes.

Marked `drill` (bounded, 20-60 s each); part of the normal suite too."""

import threading
import time

import pytest
from django.db import transaction

from orgs.models import Organization
from tests.support.receiver import Receiver
from tests.support.waiting import wait_until
from tests.support.webhooks import make_subscription
from webhooks.models import Delivery, Subscription
from webhooks.services import emit

pytestmark = [pytest.mark.drill, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("allow_local")]

FAST = {
    "WEBHOOK_ALLOW_LOCAL_URLS": "1",
    "WEBHOOK_SWEEP_INTERVAL_SECONDS": "0.5",
    "WEBHOOK_REENQUEUE_AFTER_SECONDS": "2",
}


class Gauge:
    """A receiver's `delay`: holds each request `hold` seconds and records how many were being held at once."""

    def __init__(self, hold: float):
        self.hold = hold
        self.now = 0
        self.peak = 0
        self.lock = threading.Lock()

    def __call__(self, call) -> float:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        time.sleep(self.hold)
        with self.lock:
            self.now -= 1
        return 0



def emit_together(org, count):
    with transaction.atomic():
        return [emit(org=org, type="call.ended", data={"call_id": f"c-{n}"}).id for n in range(count)]


def test_a_hanging_endpoint_of_one_org_does_not_delay_another_orgs_deliveries(org, celery_worker_factory):
    other = Organization.objects.create(name="Hangs")
    with Receiver(delay=30.0) as hanging, Receiver() as healthy:
        make_subscription(other, url=hanging.url)
        make_subscription(org, url=healthy.url)
        worker = celery_worker_factory(concurrency=2, beat=True, env=FAST)
        emit_together(other, 200)  # a backlog, every POST of which hangs until the 15 s budget runs out
        hanging.wait_for(1)
        latencies = []
        for n in range(8):
            emitted_at = time.time()
            event_id = emit(org=org, type="call.ended", data={"call_id": f"a-{n}"}).id
            wait_until(lambda event_id=event_id: event_id in healthy.ids_answered_ok(), 10,
                       lambda: f"not delivered within 10 s\n{worker.log()}")
            arrived = next(c["at"] for c in healthy.calls if c["headers"]["webhook-id"] == event_id)
            latencies.append(arrived - emitted_at)
            time.sleep(0.5)
        assert max(latencies) < 1.0, latencies
        assert len(hanging.calls) <= 4  # the hanging endpoint holds its share of sender threads, no more
        assert Delivery.objects.filter(organization=other, status="pending").count() >= 196


def test_the_in_flight_limit_holds_across_two_worker_processes(org, celery_worker_factory):
    gauge = Gauge(hold=0.4)
    with Receiver(delay=gauge) as receiver:
        make_subscription(org, url=receiver.url)
        celery_worker_factory(concurrency=2, beat=True, env=FAST)
        celery_worker_factory(concurrency=2, beat=False, env=FAST, purge=False)
        emitted = set(emit_together(org, 24))
        wait_until(lambda: receiver.ids_answered_ok() >= emitted, 60,
                   lambda: f"{len(receiver.ids_answered_ok())} of {len(emitted)} delivered")
    assert gauge.peak == 4  # reached, and never passed, by four processes with eight sender threads each


def test_a_rate_cap_of_5_per_second_holds_over_every_10_second_window_with_several_worker_processes(
    org, celery_worker_factory
):
    with Receiver() as receiver:
        sub = make_subscription(org, url=receiver.url)
        Subscription.objects.filter(pk=sub.pk).update(rate_limit_per_second=5)
        celery_worker_factory(concurrency=2, beat=True, env=FAST)
        celery_worker_factory(concurrency=2, beat=False, env=FAST, purge=False)
        emitted = set(emit_together(org, 200))
        wait_until(lambda: receiver.ids_answered_ok() >= emitted, 90,
                   lambda: f"{len(receiver.ids_answered_ok())} of {len(emitted)} delivered")
        arrivals = sorted(c["at"] for c in receiver.calls)
    busiest = max(sum(1 for t in arrivals[i:] if t < start + 10.0) for i, start in enumerate(arrivals))
    assert len(arrivals) == 200
    assert busiest <= 52, busiest
    assert arrivals[-1] - arrivals[0] >= 39.0 - 1.0  # 200 at 5/s: about 40 s, not a burst
