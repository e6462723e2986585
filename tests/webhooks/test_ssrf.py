"""SSRF: every blocked range is refused at create/update and again at delivery, on the address connected to."""

import pytest

from tests.support.receiver import Receiver
from tests.support.webhooks import attempt_delivery, make_subscription
from webhooks import ssrf
from webhooks.models import Delivery, DeliveryAttempt, Subscription
from webhooks.services import emit
from webhooks.ssrf import address_problem

BLOCKED = [
    ("127.0.0.1", "loopback"),
    ("127.8.9.10", "loopback"),
    ("::1", "loopback"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("fc00::1", "private"),
    ("100.64.0.1", "private"),
    ("169.254.169.254", "cloud metadata"),
    ("100.100.100.200", "cloud metadata"),
    ("fd00:ec2::254", "cloud metadata"),
    ("169.254.1.1", "link-local"),
    ("fe80::1", "link-local"),
    ("fec0::1", "site-local"),
    ("feff:ffff::1", "site-local"),
    ("224.0.0.1", "multicast"),
    ("ff02::1", "multicast"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("192.0.2.10", "reserved"),
    ("198.18.0.1", "reserved"),
    ("2002:7f00:1::1", "reserved"),
    ("::ffff:127.0.0.1", "IPv4-mapped"),
    ("::ffff:8.8.8.8", "IPv4-mapped"),
]


@pytest.mark.parametrize(("address", "kind"), BLOCKED)
def test_a_name_resolving_to_a_blocked_address_is_refused_at_create(api, fake_dns, address, kind):
    fake_dns.answers["evil.example"] = ["93.184.216.34", address]
    response = api.post("/v1/webhook-subscriptions", {"url": "https://evil.example/x", "events": ["call.ended"]},
                        format="json")
    assert response.status_code == 400
    [message] = response.json()["details"]["fieldErrors"]["url"]
    assert kind in message and address not in message  # the kind only: the address would map internal DNS
    assert response.json()["error"] == "Validation failed"


@pytest.mark.parametrize(
    "literal", ["127.0.0.1", "[::1]", "169.254.169.254", "10.0.0.1", "[::ffff:10.0.0.1]", "[fec0::1]"]
)
def test_literal_blocked_addresses_are_refused_at_create_and_update(api, fake_dns, literal):
    url = f"https://{literal}/hook"
    response = api.post("/v1/webhook-subscriptions", {"url": url, "events": ["call.ended"]}, format="json")
    assert response.status_code == 400 and "url" in response.json()["details"]["fieldErrors"]
    sub_id = api.post("/v1/webhook-subscriptions", {"url": "https://hooks.example.com/", "events": ["call.ended"]},
                      format="json").json()["data"]["id"]
    patched = api.patch(f"/v1/webhook-subscriptions/{sub_id}", {"url": url}, format="json")
    assert patched.status_code == 400 and "url" in patched.json()["details"]["fieldErrors"]
    assert api.get(f"/v1/webhook-subscriptions/{sub_id}").json()["data"]["url"] == "https://hooks.example.com/"


def test_a_dns_answer_that_changes_after_create_is_caught_at_delivery(api, org, fake_dns):
    """DNS rebinding: public at create, loopback at delivery. A receiver listens there and must hear nothing."""
    with Receiver() as receiver:
        fake_dns.answers["rebind.example"] = ["93.184.216.34"]
        url = f"https://rebind.example:{receiver.port}/hook"
        assert api.post("/v1/webhook-subscriptions", {"url": url, "events": ["call.ended"]},
                        format="json").status_code == 201
        fake_dns.answers["rebind.example"] = ["127.0.0.1"]
        emit(org=org, type="call.ended", data={})
        delivery = Delivery.objects.get()
        assert attempt_delivery(delivery.pk) == "retry"
        attempt = DeliveryAttempt.objects.get(delivery=delivery)
        assert attempt.status_code is None and "BlockedAddress" in attempt.error and "loopback" in attempt.error
        assert receiver.calls == []


@pytest.mark.parametrize("literal", ["[fe80::1%25eth0]", "[2606:4700::1%25eth0]", "[fd00::1%25en0]"])
def test_an_ip_literal_with_a_zone_id_is_refused_at_create_and_update(api, fake_dns, allow_local, literal):
    url = f"https://{literal}/hook"
    refusal = {"url": ["Enter a valid URL: the host must not carry a zone id (%25...)."]}
    response = api.post("/v1/webhook-subscriptions", {"url": url, "events": ["call.ended"]}, format="json")
    assert response.status_code == 400 and response.json()["details"]["fieldErrors"] == refusal
    sub_id = api.post("/v1/webhook-subscriptions", {"url": "https://hooks.example.com/", "events": ["call.ended"]},
                      format="json").json()["data"]["id"]
    patched = api.patch(f"/v1/webhook-subscriptions/{sub_id}", {"url": url}, format="json")
    assert patched.status_code == 400 and patched.json()["details"]["fieldErrors"] == refusal
    assert Subscription.objects.count() == 1


@pytest.mark.parametrize("url", ["https://\u00de\u00a2", "https://m\u00fcller.example/hook", "https://hooks.example.com/\u00e9t\u00e9",
                                 "https://hooks.example.com/<x>", 'https://hooks.example.com/"q"', "https://hooks.example.com/a|b"])
def test_a_url_outside_rfc_3986_is_refused_at_create_and_update(api, fake_dns, url):
    """The schema says `format: uri` (Schemathesis found PATCH taking `https://\u00de\u00a2`): the ASCII form only."""
    refusal = {"url": [ssrf.ASCII_ONLY]}
    response = api.post("/v1/webhook-subscriptions", {"url": url, "events": ["call.ended"]}, format="json")
    assert response.status_code == 400 and response.json()["details"]["fieldErrors"] == refusal
    ascii_form = "https://xn--mller-kva.example/hook"
    sub_id = api.post("/v1/webhook-subscriptions", {"url": ascii_form, "events": ["call.ended"]},
                      format="json").json()["data"]["id"]
    patched = api.patch(f"/v1/webhook-subscriptions/{sub_id}", {"url": url}, format="json")
    assert patched.status_code == 400 and patched.json()["details"]["fieldErrors"] == refusal
    assert list(Subscription.objects.values_list("url", flat=True)) == [ascii_form]


@pytest.mark.parametrize(("address", "kind"), BLOCKED)
def test_a_refused_delivery_names_the_kind_of_address_but_not_the_address(org, fake_dns, address, kind):
    fake_dns.answers["inside.example"] = [address]
    sub = make_subscription(org, url="https://inside.example/hook")
    emit(org=org, type="call.ended", data={})
    assert attempt_delivery(Delivery.objects.get(subscription=sub).pk) == "retry"
    error = DeliveryAttempt.objects.get().error
    assert error == f"BlockedAddress: inside.example resolves to {address_problem(address, allow_local=False)}; " \
        "not connecting"
    assert kind in error and address not in error


@pytest.mark.parametrize(("address", "kind"), BLOCKED)
def test_every_blocked_range_is_refused_at_delivery(org, fake_dns, address, kind):
    fake_dns.answers["moved.example"] = [address]
    sub = make_subscription(org, url="https://moved.example/hook")
    emit(org=org, type="call.ended", data={})
    delivery = Delivery.objects.get(subscription=sub)
    assert attempt_delivery(delivery.pk) == "retry"
    error = DeliveryAttempt.objects.get(delivery=delivery).error
    assert error.startswith("BlockedAddress") and kind in error


def test_allow_local_opens_loopback_and_private_but_not_metadata_or_public_http(api, fake_dns, allow_local):
    def post(url):
        return api.post("/v1/webhook-subscriptions", {"url": url, "events": ["call.ended"]}, format="json")

    assert post("http://127.0.0.1:8080/hook").status_code == 201
    assert post("https://10.0.0.5/hook").status_code == 201
    assert post("http://192.168.0.10/hook").status_code == 201
    assert post("http://169.254.169.254/latest").status_code == 400
    assert post("http://hooks.example.com/in").json()["details"]["fieldErrors"] == {
        "url": ["The URL must use https://."]
    }
    assert post("http://not-resolving.example/in").status_code == 400


def test_redirects_are_not_followed(org, allow_local):
    with Receiver() as target, Receiver(status=302, headers={"Location": "http://127.0.0.1:1/x"}) as redirector:
        redirector.reply_headers["Location"] = target.url
        sub = make_subscription(org, url=redirector.url)
        emit(org=org, type="call.ended", data={})
        delivery = Delivery.objects.get(subscription=sub)
        assert attempt_delivery(delivery.pk) == "retry"
        attempt = DeliveryAttempt.objects.get(delivery=delivery)
        assert (attempt.status_code, attempt.error) == (302, "Redirect not followed")
        assert len(redirector.calls) == 1 and target.calls == []
