"""A Redis outage is not an API outage: with the cache and the broker's Redis stopped, reads and writes answer as
usual and fast, rate limits fall back to a per-process window, and every event of those writes reaches a real
receiver once Redis is back."""

import os
import time

import pytest

from tests.support.celery_worker import RedisServer, use_broker
from tests.support.receiver import Receiver
from tests.support.runtime import Runtime
from tests.support.waiting import wait_until
from tests.support.webhooks import DRILL_WORKER, make_subscription
from webhooks.models import Event

pytestmark = [pytest.mark.drill, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def redis_server(settings):
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
    server = RedisServer().start()
    worker_number = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    broker = f"redis://127.0.0.1:{server.port}/{2 + worker_number * 2}"  # what test_settings derives from REDIS_URL
    settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": f"redis://127.0.0.1:{server.port}/1"}}
    try:  # the broker through use_broker only: it restores the URL it found, which must be the suite's own
        with use_broker(broker):
            yield server
    finally:
        server.stop()


def test_reads_and_writes_answer_while_redis_is_down_and_events_arrive_after(
    org, api, redis_server, celery_worker_factory
):
    with Receiver() as receiver:
        make_subscription(org, url=receiver.url, events=("call_order.status_changed",))
        runtime = Runtime(org)
        call_id, _ = runtime.start()
        assert runtime.complete(call_id).status_code in (200, 201)
        call = runtime.call(call_id)
        redis_server.stop()

        assert api.get("/v1/me").status_code == 200
        started = time.monotonic()
        patched = api.patch(f"/v1/calls/{call.pk}/order-status", {"status": "in_progress"}, format="json")
        took = time.monotonic() - started
        assert patched.status_code == 200 and took < 1.0
        assert api.post("/v1/contacts", {"phone_number": "+14155550187"}, format="json").status_code == 201
        assert api.get("/v1/calls").status_code == 200
        event = Event.objects.get(type="call_order.status_changed")

        redis_server.start()
        celery_worker_factory(concurrency=1, beat=True, env={**DRILL_WORKER, "REDIS_URL": redis_server.url})
        wait_until(lambda: event.id in receiver.ids_answered_ok(), 60, lambda: "the event never arrived")


def test_rate_limits_fall_back_to_a_window_of_this_process(api, redis_server, settings):
    settings.RATE_LIMIT_READS_PER_MINUTE = 3
    redis_server.stop()
    statuses = [api.get("/v1/me").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
