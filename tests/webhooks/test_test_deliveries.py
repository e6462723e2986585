"""POST /v1/webhook-subscriptions/{id}/test: a genuine event and two forgeries to a real receiver, and the verdict;
nothing of it is a delivery, an attempt, an event, or a mark on the subscription's health."""

import json
import socket

import jsonschema
import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from tests.support.receiver import Receiver
from tests.support.webhooks import make_subscription
from webhooks import conf
from webhooks.catalog import envelope_schema
from webhooks.models import Delivery, DeliveryAttempt, Event, Subscription

pytestmark = pytest.mark.usefixtures("allow_local")


def verifying(secret, *, reserialize=False):
    """A receiver's status rule: 200 when the signature verifies (over the raw bytes, or, the classic mistake, over
    the JSON parsed and serialized again), 401 otherwise."""

    def status(call):
        body = json.dumps(json.loads(call["body"])).encode() if reserialize else call["body"]
        try:
            Webhook(secret).verify(body, call["headers"])
        except WebhookVerificationError:
            return 401
        return 200

    return status


def run(api, sub, **body):
    return api.post(f"/v1/webhook-subscriptions/{sub.pk}/test", body, format="json")


def health(sub):
    sub.refresh_from_db()
    return sub.enabled, sub.last_success_at, sub.failing_since


def nothing_logged(org):
    return not (Event.objects.filter(organization=org).exists() or Delivery.objects.exists()
                or DeliveryAttempt.objects.exists())


def test_a_receiver_that_verifies_signatures(api, org):
    with Receiver() as receiver:
        sub = make_subscription(org, url=receiver.url)
        receiver.status = verifying(sub.plain_secret)
        before = health(sub)
        response = run(api, sub)
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["verdict"] == "verifies_signatures"
    assert [(c["name"], c["status_code"], c["error"]) for c in data["checks"]] == [
        ("valid", 200, None), ("bad_signature", 401, None), ("stale_timestamp", 401, None),
    ]
    assert all(set(c) == {"name", "status_code", "duration_ms", "error", "response_excerpt"} for c in data["checks"])
    assert data["checks"][1]["response_excerpt"] == '{"ok":true}'
    ids = [c["headers"]["webhook-id"] for c in receiver.calls]
    assert len(set(ids)) == 3 and all(i.startswith("evt_test_") for i in ids)
    sent = json.loads(receiver.calls[0]["body"])
    assert sent["type"] == "call.ended" and sent["id"] == ids[0]
    assert receiver.calls[1]["body"] == receiver.calls[2]["body"] == receiver.calls[0]["body"]
    assert int(receiver.calls[2]["headers"]["webhook-timestamp"]) <= int(
        receiver.calls[0]["headers"]["webhook-timestamp"]) - 600
    assert health(sub) == before and nothing_logged(org)


def test_a_receiver_that_accepts_anything(api, org):
    with Receiver(status=200) as receiver:
        sub = make_subscription(org, url=receiver.url)
        data = run(api, sub, type="contact.created").json()["data"]
    assert data["verdict"] == "accepts_invalid_signatures"
    assert "does not verify" in data["message"]
    assert json.loads(receiver.calls[0]["body"])["type"] == "contact.created"
    assert nothing_logged(org)


def test_a_receiver_that_verifies_reserialized_json(api, org):
    with Receiver() as receiver:
        sub = make_subscription(org, url=receiver.url)
        receiver.status = verifying(sub.plain_secret, reserialize=True)
        data = run(api, sub).json()["data"]
    assert data["verdict"] == "rejects_valid_signature"
    assert "raw request body" in data["message"]
    assert [c["status_code"] for c in data["checks"]] == [401, 401, 401]


@pytest.mark.parametrize("event_type", ["call.appointment_booked", "meeting.outcome_approved", "call.ended"])
def test_the_example_sent_validates_against_the_catalog(api, org, event_type):
    with Receiver(status=200) as receiver:
        sub = make_subscription(org, url=receiver.url)
        assert run(api, sub, type=event_type).status_code == 200
    body = json.loads(receiver.calls[0]["body"])
    jsonschema.Draft202012Validator(envelope_schema(event_type)).validate(body)


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_endpoint_that_is_down_is_unreachable_not_an_error(api, org):
    sub = make_subscription(org, url=f"http://127.0.0.1:{_closed_port()}/hook")
    response = run(api, sub)
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["verdict"] == "unreachable"
    assert data["checks"][0]["status_code"] is None and data["checks"][0]["error"].startswith("ConnectionError")
    assert [c["error"] for c in data["checks"][1:]] == ["Skipped: the genuine event got no answer."] * 2
    assert nothing_logged(org)


def test_a_redirect_is_unreachable_with_its_reason(api, org):
    with Receiver(status=302, headers={"Location": "https://example.com/"}) as receiver:
        sub = make_subscription(org, url=receiver.url)
        data = run(api, sub).json()["data"]
    assert data["verdict"] == "unreachable"
    assert (data["checks"][0]["status_code"], data["checks"][0]["error"]) == (302, "Redirect not followed")


def test_a_blocked_address_is_unreachable_and_never_connected_to(api, org, settings):
    settings.WEBHOOK_ALLOW_LOCAL_URLS = False
    with Receiver(status=200) as receiver:
        sub = make_subscription(org, url=receiver.url.replace("http://", "https://"))
        data = run(api, sub).json()["data"]
    assert data["verdict"] == "unreachable"
    assert data["checks"][0]["error"].startswith("BlockedAddress")
    assert receiver.calls == []


def test_bad_bodies_are_400(api, org):
    sub = make_subscription(org)
    response = run(api, sub, type="call.started")
    assert (response.status_code, response.json()) == (400, {"error": "Validation failed", "details": {
        "formErrors": [], "fieldErrors": {"type": ['"call.started" is not a valid choice.']}}})


def test_ten_tests_a_minute_per_subscription_then_429(api, org):
    with Receiver(status=200) as receiver:
        sub = make_subscription(org, url=receiver.url)
        other = make_subscription(org, url=receiver.url)
        statuses = [run(api, sub).status_code for _ in range(11)]
        assert run(api, other).status_code == 200
    assert statuses == [200] * 10 + [429]


def test_another_orgs_subscription_is_404_and_nothing_is_sent(api, other_org):
    with Receiver(status=200) as receiver:
        theirs = make_subscription(other_org, url=receiver.url)
        response = run(api, theirs)
    assert (response.status_code, response.json()) == (404, {"error": "not_found"})
    assert receiver.calls == [] and Subscription.objects.get(pk=theirs.pk).last_success_at is None


def test_a_slow_endpoint_is_unreachable_with_a_timeout(api, org, monkeypatch):
    monkeypatch.setattr(conf, "TOTAL_TIMEOUT", 0.5)
    with Receiver(status=200, delay=2) as receiver:
        sub = make_subscription(org, url=receiver.url)
        data = run(api, sub).json()["data"]
    assert data["verdict"] == "unreachable"
    assert data["checks"][0]["error"].startswith("Timeout")
    assert nothing_logged(org)
