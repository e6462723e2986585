"""Operational events (docs/webhooks.md#operational-events): `webhook_subscription.failing` at the fourth consecutive
failed attempt, `.disabled` with the reason, `.recovered` at the first 2xx after failing; sent to the organization's
other subscriptions that choose them, and e-mailed to the "webhook problems" recipients; never to the failing endpoint
itself, even when it chose them. The sender runs in-process against real loopback receivers."""

import json

import pytest
from django.utils import timezone

from notifications.models import EmailNotification
from notifications.services import recipient_create
from tests.support.receiver import Receiver
from tests.support.webhooks import attempt_delivery, make_subscription
from webhooks.models import Delivery, Event
from webhooks.services import emit
from webhooks.ssrf import masked_url

pytestmark = pytest.mark.usefixtures("allow_local")

OPERATIONAL = ("webhook_subscription.failing", "webhook_subscription.disabled", "webhook_subscription.recovered")


def deliver_everything_due(org):
    """One attempt of every pending delivery due now, as a worker makes it; returns what happened to each."""
    due = Delivery.objects.filter(organization=org, status="pending", next_attempt_at__lte=timezone.now())
    return {str(pk): attempt_delivery(pk) for pk in due.values_list("pk", flat=True)}


def types_received(receiver) -> list[str]:
    return [json.loads(call["body"])["type"] for call in receiver.calls]


def test_failing_and_recovered_reach_the_other_subscriptions_and_never_the_failing_one(org, admin):
    recipient_create(org=org, by=admin, email="ops@acme.example", webhook_problems=True)
    healthy = {"status": 500}
    with Receiver(status=lambda call: healthy["status"]) as crm, Receiver(status=200) as ops:
        # The failing endpoint chose the operational events too: they must still never reach it.
        failing = make_subscription(org, url=crm.url, events=("call.ended", *OPERATIONAL))
        watcher = make_subscription(org, url=ops.url, events=OPERATIONAL)
        for n in range(3):
            emit(org=org, type="call.ended", data={"call_id": f"c{n}"})
        deliver_everything_due(org)
        assert not Event.objects.filter(type__in=OPERATIONAL).exists()  # three failures: not yet
        failing.refresh_from_db()
        assert failing.consecutive_failures == 3

        emit(org=org, type="call.ended", data={"call_id": "c3"})
        deliver_everything_due(org)  # the fourth consecutive failure
        (event,) = Event.objects.filter(type="webhook_subscription.failing")
        assert event.data == {
            "subscription_id": str(failing.pk), "url": masked_url(crm.url), "consecutive_failures": 4,
            "failing_since": event.data["failing_since"], "last_status_code": 500, "last_error": "HTTP 500",
        }
        assert list(Delivery.objects.filter(event=event).values_list("subscription_id", flat=True)) == [watcher.pk]
        deliver_everything_due(org)
        assert types_received(ops) == ["webhook_subscription.failing"]

        emit(org=org, type="call.ended", data={"call_id": "c4"})
        deliver_everything_due(org)  # a fifth failure: no second `failing` in one streak
        assert Event.objects.filter(type="webhook_subscription.failing").count() == 1

        healthy["status"] = 200
        emit(org=org, type="call.ended", data={"call_id": "c5"})
        deliver_everything_due(org)
        (recovered,) = Event.objects.filter(type="webhook_subscription.recovered")
        assert recovered.data["subscription_id"] == str(failing.pk)
        deliver_everything_due(org)
        assert types_received(ops) == ["webhook_subscription.failing", "webhook_subscription.recovered"]
        emit(org=org, type="call.ended", data={"call_id": "c6"})
        deliver_everything_due(org)
        assert Event.objects.filter(type="webhook_subscription.recovered").count() == 1

    assert set(types_received(crm)) == {"call.ended"}
    assert not Delivery.objects.filter(subscription=failing, event__type__in=OPERATIONAL).exists()
    subjects = sorted(EmailNotification.objects.filter(to_email="ops@acme.example").values_list("subject", flat=True))
    assert subjects == ["Webhook endpoint failing", "Webhook endpoint recovered"]


def test_disabled_reaches_the_other_subscriptions_with_the_reason_and_never_the_disabled_one(org):
    with Receiver(status=410) as gone, Receiver(status=200) as ops:
        failing = make_subscription(org, url=gone.url, events=("call.ended", *OPERATIONAL))
        watcher = make_subscription(org, url=ops.url, events=OPERATIONAL)
        emit(org=org, type="call.ended", data={"call_id": "c"})
        deliver_everything_due(org)
        (event,) = Event.objects.filter(type="webhook_subscription.disabled")
        assert (event.data["subscription_id"], event.data["reason"]) == (str(failing.pk),
                                                                         "The endpoint answered 410 Gone.")
        assert list(Delivery.objects.filter(event=event).values_list("subscription_id", flat=True)) == [watcher.pk]
        deliver_everything_due(org)
        assert types_received(ops) == ["webhook_subscription.disabled"]
    assert types_received(gone) == ["call.ended"]


def test_another_organizations_subscriptions_hear_nothing(org, other_org):
    with Receiver(status=500) as crm, Receiver(status=200) as theirs:
        make_subscription(org, url=crm.url, events=("call.ended",))
        make_subscription(other_org, url=theirs.url, events=OPERATIONAL)
        for n in range(4):
            emit(org=org, type="call.ended", data={"call_id": f"c{n}"})
        deliver_everything_due(org)
        deliver_everything_due(other_org)
        assert Event.objects.filter(type="webhook_subscription.failing", organization=org).count() == 1
        assert theirs.calls == []
