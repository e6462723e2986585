"""A subscription URL is vetted (DNS included) once per write, by the service, outside any transaction; the API
serializer checks shapes only, and every field's error is reported together."""

import pytest
from django.db import connection

from tests.support.webhooks import make_subscription
from webhooks import services
from webhooks.api.serializers import SubscriptionCreateInput
from webhooks.models import Subscription

URL = "https://hooks.example.com/in"


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
