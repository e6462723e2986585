"""Rules from the webhooks review: health reads are one query whatever the number of subscriptions; a URL is
vetted (DNS) once per write and never inside a transaction; recover counts and enqueues exactly what it reset;
retry and recover are documented as 202."""

import json
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.support.clients import logged_in
from tests.webhooks.helpers import make_subscription
from webhooks import selectors, services
from webhooks.models import Delivery, DeliveryAttempt, Event, Subscription

URL = "https://hooks.example.com/in"


def _event(org):
    return Event.objects.create(
        id=Event.new_id(), organization=org, type="call.ended", created_at=timezone.now(), payload=b"{}"
    )


def _delivery(org, sub, *, status=Delivery.Status.FAILED):
    return Delivery.objects.create(organization=org, event=_event(org), subscription=sub, status=status)


def _attempt(org, delivery, number, status_code, *, at=None):
    attempt = DeliveryAttempt.objects.create(
        organization=org, delivery=delivery, number=number, status_code=status_code, duration_ms=5
    )
    if at is not None:
        DeliveryAttempt.objects.filter(pk=attempt.pk).update(created_at=at)
    return attempt


def _unhealthy_subscription(org, i):
    """A failing subscription that once succeeded: 2 pending deliveries, failures before and after the success."""
    now = timezone.now()
    sub = make_subscription(org, url=f"https://hooks.example.com/{i}")
    pending, done = _delivery(org, sub, status="pending"), _delivery(org, sub, status="failed")
    _delivery(org, sub, status="pending")
    _attempt(org, done, 1, 500, at=now - timedelta(hours=3))  # before the last success: not in the streak
    _attempt(org, done, 2, 200, at=now - timedelta(hours=2))
    _attempt(org, done, 3, 503, at=now - timedelta(hours=1))
    _attempt(org, pending, 1, None, at=now - timedelta(minutes=30))  # a connection error counts
    _attempt(org, pending, 2, 302, at=now - timedelta(minutes=10))  # a redirect is a failure
    Subscription.objects.filter(pk=sub.pk).update(
        last_success_at=now - timedelta(hours=2), failing_since=now - timedelta(hours=1),
        enabled=False, disabled_reason="Every delivery failed.",
    )
    return sub


# 1. Health without N+1 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 10])
def test_subscription_health_list_is_one_query_whatever_the_number_of_subscriptions(
    org, django_assert_num_queries, count
):
    for i in range(count):
        _unhealthy_subscription(org, i)
    with django_assert_num_queries(1):
        health = selectors.subscription_list_with_health(org)
    assert len(health) == count
    assert {(h.failure_streak, h.pending_count, h.disabled_reason) for h in health} == {
        (3, 2, "Every delivery failed.")
    }


def test_health_values_match_the_rules(org, other_org):
    now = timezone.now()
    failing = _unhealthy_subscription(org, "failing")
    never_ok = make_subscription(org, url="https://hooks.example.com/never")
    d = _delivery(org, never_ok)
    _attempt(org, d, 1, 500)
    _attempt(org, d, 2, 404)
    Subscription.objects.filter(pk=never_ok.pk).update(failing_since=now - timedelta(hours=1))
    healthy = make_subscription(org, url="https://hooks.example.com/ok")
    _attempt(org, _delivery(org, healthy, status="succeeded"), 1, 500)  # old failure; failing_since is None
    make_subscription(other_org)  # another org's: never listed
    by_pk = {h.subscription.pk: h for h in selectors.subscription_list_with_health(org)}
    assert list(by_pk) == [healthy.pk, never_ok.pk, failing.pk]  # newest first
    got = {pk: (h.failure_streak, h.pending_count, h.disabled_reason) for pk, h in by_pk.items()}
    assert got == {failing.pk: (3, 2, "Every delivery failed."), never_ok.pk: (2, 0, ""), healthy.pk: (0, 0, "")}
    one = selectors.subscription_get_with_health(org=org, subscription_id=failing.pk)
    assert one == by_pk[failing.pk]
    assert selectors.subscription_get_with_health(org=other_org, subscription_id=failing.pk) is None


@pytest.mark.parametrize("count", [1, 10])
def test_single_subscription_health_is_one_query(org, django_assert_num_queries, count):
    subs = [_unhealthy_subscription(org, i) for i in range(count)]
    with django_assert_num_queries(1):
        health = selectors.subscription_get_with_health(org=org, subscription_id=subs[0].pk)
    assert (health.subscription, health.failure_streak, health.pending_count) == (subs[0], 3, 2)


def test_the_detail_page_does_not_compute_health_for_every_subscription(org, admin):
    client = logged_in(admin)
    target = _unhealthy_subscription(org, "target")

    def detail_queries():
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(f"/settings/webhooks/{target.pk}/")
        assert response.status_code == 200 and response.context["health"].failure_streak == 3
        return len(ctx.captured_queries)

    detail_queries()  # the first request of a session writes a few rows once
    alone = detail_queries()
    for i in range(10):
        _unhealthy_subscription(org, i)
    assert detail_queries() == alone


# 2. The URL is vetted once, by the service, outside the transaction -----------------------------------------------


@pytest.fixture
def dns_calls(fake_dns, monkeypatch):
    """Every host the one DNS edge is asked about, with whether a transaction was open at the time."""
    calls = []

    def counting(host, port):
        calls.append((host, connection.in_atomic_block))
        return fake_dns(host, port)

    monkeypatch.setattr("webhooks.ssrf.resolve_host", counting)
    return calls


def test_one_api_create_resolves_the_host_exactly_once(api, dns_calls):
    response = api.post("/v1/webhook-subscriptions", {"url": URL, "events": ["call.ended"]}, format="json")
    assert response.status_code == 201
    assert [host for host, _ in dns_calls] == ["hooks.example.com"]


def test_one_api_update_of_the_url_resolves_the_host_exactly_once(api, org, dns_calls):
    sub = make_subscription(org)
    response = api.patch(f"/v1/webhook-subscriptions/{sub.pk}", {"url": "https://api.partner.io/x"}, format="json")
    assert response.status_code == 200
    assert [host for host, _ in dns_calls] == ["api.partner.io"]


def test_a_refused_url_is_resolved_once_and_keeps_the_400_shape(api, fake_dns, dns_calls):
    fake_dns.answers["evil.example"] = ["10.0.0.1"]
    response = api.post("/v1/webhook-subscriptions", {"url": "https://evil.example/x", "events": ["call.ended"]},
                        format="json")
    assert response.status_code == 400
    assert response.json() == {"error": "Validation failed", "details": {"formErrors": [], "fieldErrors": {
        "url": ["The host resolves to a private address, which webhooks may not reach."]}}}
    assert [host for host, _ in dns_calls] == ["evil.example"]


def test_url_and_event_errors_are_reported_together(api, dns_calls):
    response = api.post("/v1/webhook-subscriptions", {"url": "ftp://x.example/", "events": []}, format="json")
    assert response.status_code == 400
    assert response.json()["details"]["fieldErrors"] == {
        "url": ["Enter a valid https:// URL."], "events": ["Choose at least one event type."]
    }
    assert not Subscription.objects.exists()


def test_the_serializer_checks_shape_only_and_touches_no_dns(dns_calls):
    from webhooks.api.serializers import SubscriptionCreateInput

    serializer = SubscriptionCreateInput(data={"url": "https://evil.example/x", "events": ["no.such.type"]})
    assert serializer.is_valid(), serializer.errors  # the rules are the service's
    assert dns_calls == []
    bad = SubscriptionCreateInput(data={"url": ["x"], "events": "call.ended"})
    assert not bad.is_valid() and set(bad.errors) == {"url", "events"}


@pytest.mark.django_db(transaction=True)
def test_create_and_update_resolve_dns_outside_any_transaction(org, dns_calls):
    sub, _ = services.subscription_create(org=org, url=URL, events=["call.ended"])
    services.subscription_update(subscription=sub, url="https://api.partner.io/x", description="d")
    assert dns_calls == [("hooks.example.com", False), ("api.partner.io", False)]
    sub.refresh_from_db()
    assert (sub.url, sub.description) == ("https://api.partner.io/x", "d")


# 3. Recover counts and enqueues exactly the rows it reset ----------------------------------------------------------


@pytest.fixture
def enqueued(monkeypatch):
    calls = []
    monkeypatch.setattr("webhooks.dispatch.enqueue", lambda ids, **kw: calls.append(sorted(map(str, ids))))
    return calls


def test_recover_requeues_only_failed_deliveries_of_that_subscription_since_the_time(org, enqueued):
    sub, other = make_subscription(org), make_subscription(org)
    failed = _delivery(org, sub)
    old = _delivery(org, sub)
    Delivery.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=3))
    for status in ("succeeded", "pending"):
        _delivery(org, sub, status=status)
    _delivery(org, other)  # another subscription's
    Delivery.objects.filter(pk=failed.pk).update(attempt_count=10, claim_token=None)
    with transaction.atomic():
        count = services.deliveries_recover(subscription=sub, since=timezone.now() - timedelta(days=1))
    assert count == 1
    failed.refresh_from_db()
    assert (failed.status, failed.attempt_count, failed.next_trigger) == ("pending", 0, "manual")
    assert Delivery.objects.get(pk=old.pk).status == "failed"


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="a second session holding a row lock is PostgreSQL's")
def test_a_delivery_changed_while_recover_runs_is_neither_counted_nor_enqueued(org, enqueued):
    """Another transaction (a manual retry) has made D2 pending, uncommitted, when recover runs; it commits while
    recover waits for D2's row lock. Recover must reset, count and enqueue D1 only."""
    sub = make_subscription(org)
    d1, d2 = _delivery(org, sub), _delivery(org, sub)
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


# Docs: retry and recover answer 202 ------------------------------------------------------------------------------


def test_retry_and_recover_are_documented_as_202(db):
    schema = json.loads(Client().get("/api/openapi.json").content)
    for path in ("/v1/webhook-subscriptions/{id}/deliveries/{delivery_id}/retry",
                 "/v1/webhook-subscriptions/{id}/recover"):
        responses = schema["paths"][path]["post"]["responses"]
        assert "202" in responses and not {"200", "201"} & set(responses), (path, sorted(responses))
