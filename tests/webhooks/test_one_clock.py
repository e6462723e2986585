"""One clock (docs/deployment.md#time): two workers, one of them under libfaketime 30 s ahead, drain the same
deliveries. Every lease, in-flight count and rate-cap slot is PostgreSQL's, so the fast clock sends nothing that the
other worker holds and the rate cap holds within 5%. With the workers' own clocks deciding, the fast one took every
lease the other held as expired (sent twice) and sent rate-capped slots at once as already past."""

import shutil
import statistics
from pathlib import Path

import pytest
from django.db import transaction

from tests.support.receiver import Receiver
from tests.support.waiting import wait_until
from tests.support.webhooks import make_subscription
from webhooks.models import Delivery, Subscription
from webhooks.services import emit

pytestmark = [pytest.mark.drill, pytest.mark.django_db(transaction=True)]

LIBFAKETIME = next((path for path in ("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
                                      "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1")
                    if Path(path).exists()), None)
EVENTS = 80
RATE = 10  # per second, the capped subscription's
WORKERS = {
    "WEBHOOK_ALLOW_LOCAL_URLS": "1",
    "WEBHOOK_LEASE_SECONDS": "10",  # shorter than the skew: a lease judged on the fast clock looks long expired
    "WEBHOOK_MAX_IN_FLIGHT": "20",
    # A run claims only a subscription's in-flight limit: claiming ahead, the first run took all 80 deliveries of a
    # subscription and the other worker had nothing left to contend for (the drill then tested nothing).
    "WEBHOOK_CLAIM_AHEAD": "1",
    "WEBHOOK_SWEEP_INTERVAL_SECONDS": "0.3",
    "WEBHOOK_REENQUEUE_AFTER_SECONDS": "1",
    "WEBHOOK_RETRY_SCHEDULE": ",".join(["0.5"] * 9),
}


@pytest.mark.skipif(LIBFAKETIME is None or shutil.which("faketime") is None,
                    reason="libfaketime is not installed (Debian: apt-get install faketime; .ci/run installs it)")
def test_a_worker_30_seconds_ahead_sends_nothing_twice_and_keeps_the_rate_cap(org, celery_worker_factory, settings):
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
    with Receiver(delay=0.4) as capped, Receiver(delay=1.0) as slow:
        capped_sub = make_subscription(org, url=capped.url)
        Subscription.objects.filter(pk=capped_sub.pk).update(rate_limit_per_second=RATE)
        make_subscription(org, url=slow.url)
        on_time = celery_worker_factory(concurrency=2, beat=True, env=WORKERS)
        ahead = celery_worker_factory(concurrency=2, purge=False, env={
            **WORKERS, "LD_PRELOAD": LIBFAKETIME, "FAKETIME": "+30s", "FAKETIME_DONT_RESET": "1"})
        with transaction.atomic():
            events = [emit(org=org, type="call.ended", data={"call_id": f"c-{n}"}).id for n in range(EVENTS)]
        try:
            wait_until(lambda: not Delivery.objects.exclude(status="succeeded").exists(), 120,
                       lambda: f"undelivered: {Delivery.objects.exclude(status='succeeded').count()}")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{on_time.log()[-3000:]}\n{ahead.log()[-3000:]}") from None
        capped_calls, slow_calls = list(capped.calls), list(slow.calls)
    # The fast worker signs with its own clock (webhook-timestamp, checked by receivers within minutes): its sends
    # and the other's show both took part, so the drill tested something.
    fast = [call for call in capped_calls + slow_calls if int(call["headers"]["webhook-timestamp"]) > call["at"] + 20]
    assert fast, "the worker 30 s ahead sent nothing"
    assert len(fast) < len(capped_calls) + len(slow_calls), "the worker on time sent nothing"

    for calls in (capped_calls, slow_calls):
        ids = [call["headers"]["webhook-id"] for call in calls]
        assert sorted(ids) == sorted(events), f"sent twice: {len(ids) - len(set(ids))}"
    # The sustained rate: the slope of the sends' count over their arrival times (least squares), which one send
    # delayed by a busy machine does not move the way it moves first-to-last. Sending rate-capped slots at once, as
    # the fast clock did, drains at the in-flight cap's pace (about 50 a second here).
    arrivals = sorted(call["at"] for call in capped_calls)
    rate = statistics.linear_regression(arrivals, range(len(arrivals))).slope
    assert rate <= RATE * 1.05, rate

