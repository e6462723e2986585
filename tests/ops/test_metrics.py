"""GET /metrics: off without METRICS_TOKEN, behind it otherwise; requests by route and status; and the delivery lag
growing while a receiver is down and falling to 0 once it is back, with a real worker delivering."""

import re

import pytest

from core import metrics
from tests.support.receiver import Receiver
from tests.support.waiting import wait_until
from tests.support.webhooks import DRILL_WORKER, make_subscription
from webhooks.services import emit

TOKEN = "metrics-token-0123456789"


def scrape(client) -> str:
    metrics.reset_cache()
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
    return response.content.decode()


def value(text: str, name: str) -> float:
    return float(re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE).group(1))


@pytest.mark.django_db
def test_off_without_a_token_and_behind_it_with_one(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics").status_code == 404
    settings.METRICS_TOKEN = TOKEN
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    text = scrape(client)
    for name in ("voiceagent_webhook_outbox_depth", "voiceagent_webhook_delivery_lag_seconds",
                 "voiceagent_webhook_subscriptions_disabled", "voiceagent_email_outbox_depth",
                 "voiceagent_celery_queue_length", "voiceagent_requests_total"):
        assert name in text


@pytest.mark.django_db
def test_requests_are_counted_by_route_and_status(client, api, settings):
    settings.METRICS_TOKEN = TOKEN
    before = scrape(client)
    pattern = 'voiceagent_requests_total{method="GET",route="v1/calls",status="200"}'
    start = value(before, pattern) if pattern in before else 0.0
    api.get("/v1/calls")
    api.get("/v1/calls")
    assert value(scrape(client), pattern) == start + 2


@pytest.mark.django_db
def test_a_made_up_method_is_counted_as_other_and_mints_no_series(client, api, settings):
    settings.METRICS_TOKEN = TOKEN
    pattern = 'voiceagent_requests_total{method="OTHER",route="v1/calls",status="405"}'
    before = scrape(client)
    start = value(before, pattern) if pattern in before else 0.0
    for method in ("BREW", "WHEN", "FOO"):
        assert api.generic(method, "/v1/calls").status_code == 405
    after = scrape(client)
    assert value(after, pattern) == start + 3
    assert not re.search(r'method="(BREW|WHEN|FOO)"', after)


@pytest.mark.drill
@pytest.mark.django_db(transaction=True)
def test_the_delivery_lag_grows_while_a_receiver_is_down_and_falls_after(client, org, settings,
                                                                         celery_worker_factory):
    settings.METRICS_TOKEN = TOKEN
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
    with Receiver() as probe:
        port = probe.port
    make_subscription(org, url=f"http://127.0.0.1:{port}/hook")  # nothing listens: refused
    celery_worker_factory(concurrency=1, beat=True, env=DRILL_WORKER)
    for n in range(3):
        emit(org=org, type="call.ended", data={"n": n})
    first = value(scrape(client), "voiceagent_webhook_delivery_lag_seconds")

    def grown() -> str:
        text = scrape(client)
        return text if value(text, "voiceagent_webhook_delivery_lag_seconds") > first else ""

    second = wait_until(grown, 20, "a longer delivery lag")
    assert value(second, "voiceagent_webhook_delivery_lag_seconds") > first > 0
    assert value(second, "voiceagent_webhook_outbox_depth") == 3
    with Receiver(port=port) as receiver:
        wait_until(lambda: value(scrape(client), "voiceagent_webhook_outbox_depth") == 0, 40,
                   lambda: f"still pending; received {len(receiver.calls)}")
    assert value(scrape(client), "voiceagent_webhook_delivery_lag_seconds") == 0
