"""End to end: the API, emit(), a real Celery worker subprocess and real HTTP receivers on loopback."""

import json

import pytest
from django.db import transaction
from standardwebhooks import Webhook
from svix.webhooks import Webhook as SvixWebhook

from tests.support.receiver import Receiver
from tests.support.webhooks import FAST_WORKER
from webhooks.models import Delivery, DeliveryAttempt
from webhooks.services import emit


def verify(call, secret):
    """Both libraries a subscriber would use accept the delivery as sent."""
    payload = Webhook(secret).verify(call["body"], call["headers"])
    SvixWebhook(secret).verify(call["body"], call["headers"])
    return payload


@pytest.mark.django_db(transaction=True)
def test_deliveries_are_signed_retried_with_same_bytes_and_reach_only_enabled_subscriptions_of_the_org(
    api, other_api, org, other_org, allow_local, celery_worker_factory
):
    flaky_seen = set()

    def first_try_fails(call):
        if call["path"] == "/flaky" and call["headers"]["webhook-id"] not in flaky_seen:
            flaky_seen.add(call["headers"]["webhook-id"])
            return 500
        return 200

    with Receiver(status=first_try_fails) as mine, Receiver() as disabled, Receiver() as theirs:
        created = api.post(
            "/v1/webhook-subscriptions", {"url": mine.url, "events": ["call.ended", "contact.created"]}, format="json"
        )
        assert created.status_code == 201, created.json()
        secret = created.json()["secret"]
        sub_id = created.json()["data"]["id"]
        flaky = api.post("/v1/webhook-subscriptions",
                         {"url": mine.url.replace("/hook", "/flaky"), "events": ["call.ended"]}, format="json")
        flaky_secret = flaky.json()["secret"]
        off = api.post("/v1/webhook-subscriptions", {"url": disabled.url, "events": ["call.ended"]}, format="json")
        assert api.patch(f"/v1/webhook-subscriptions/{off.json()['data']['id']}", {"enabled": False},
                         format="json").status_code == 200
        assert other_api.post("/v1/webhook-subscriptions", {"url": theirs.url, "events": ["call.ended"]},
                              format="json").status_code == 201

        worker = celery_worker_factory(concurrency=2, beat=True, env=FAST_WORKER)
        with transaction.atomic():
            first = emit(org=org, type="call.ended", data={"call_id": "c-1", "summary": "Ordered a pizza ünd more"})
        with transaction.atomic():
            second = emit(org=org, type="contact.created", data={"contact_id": "k-1"})

        try:
            calls = mine.wait_for(4, timeout=60)  # /hook gets 2; /flaky gets call.ended twice (500, then 200)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{worker.log()}") from None
        hook_calls = [c for c in calls if c["path"] == "/hook"]
        flaky_calls = [c for c in calls if c["path"] == "/flaky"]
        assert sorted(c["headers"]["webhook-id"] for c in hook_calls) == sorted([first.id, second.id])
        for call in hook_calls:
            payload = verify(call, secret)
            assert call["body"] == bytes({first.id: first, second.id: second}[payload["id"]].payload)
            assert call["headers"]["content-type"] == "application/json"
            assert call["headers"]["user-agent"].startswith("VoiceAgent-Webhooks")
        assert len(flaky_calls) == 2
        assert flaky_calls[0]["headers"]["webhook-id"] == flaky_calls[1]["headers"]["webhook-id"] == first.id
        assert flaky_calls[0]["body"] == flaky_calls[1]["body"] == first.payload
        for call in flaky_calls:
            verify(call, flaky_secret)

        # Rotation with a grace period: both secrets sign, each signature verifies alone.
        rotated = api.post(f"/v1/webhook-subscriptions/{sub_id}/rotate-secret", {"grace_period_seconds": 600},
                           format="json")
        assert rotated.status_code == 200
        new_secret = rotated.json()["secret"]
        with transaction.atomic():
            third = emit(org=org, type="call.ended", data={"call_id": "c-2"})
        call = [c for c in mine.wait_for(6) if c["headers"]["webhook-id"] == third.id and c["path"] == "/hook"][0]
        assert len(call["headers"]["webhook-signature"].split(" ")) == 2
        assert verify(call, secret)["id"] == third.id
        assert verify(call, new_secret)["data"] == {"call_id": "c-2"}

        # Without a grace period the old secret stops signing at once.
        rotated = api.post(f"/v1/webhook-subscriptions/{sub_id}/rotate-secret", {}, format="json")
        newest = rotated.json()["secret"]
        with transaction.atomic():
            fourth = emit(org=org, type="call.ended", data={})
        call = [c for c in mine.wait_for(8) if c["headers"]["webhook-id"] == fourth.id and c["path"] == "/hook"][0]
        assert len(call["headers"]["webhook-signature"].split(" ")) == 1
        verify(call, newest)

        assert disabled.calls == [] and theirs.calls == []
        assert not Delivery.objects.filter(subscription_id=off.json()["data"]["id"]).exists()
        assert json.loads(first.payload)["data"]["summary"] == "Ordered a pizza ünd more"
        flaky_delivery = Delivery.objects.get(subscription_id=flaky.json()["data"]["id"], event_id=first.id)
        assert flaky_delivery.status == "succeeded" and flaky_delivery.attempt_count == 2
        assert list(DeliveryAttempt.objects.filter(delivery=flaky_delivery).order_by("number")
                    .values_list("number", "status_code", "trigger")) == [(1, 500, "scheduled"), (2, 200, "scheduled")]
