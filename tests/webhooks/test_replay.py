"""POST /v1/webhook-subscriptions/{id}/replay: what a subscription missed (while disabled, before it existed, or
failed) is queued again with its original id and bytes, once; and the loss drill against a real worker and receiver."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from standardwebhooks import Webhook

from core.timefmt import iso_ms
from tests.support.receiver import Receiver
from tests.support.runtime import Runtime
from tests.support.webhooks import FAST_WORKER, make_subscription
from webhooks.models import Delivery, Event
from webhooks.services import emit


def validation(field_errors):
    return {"error": "Validation failed", "details": {"formErrors": [], "fieldErrors": field_errors}}


def replay(api, sub, **body):
    body.setdefault("since", iso_ms(timezone.now() - timedelta(hours=1)))
    return api.post(f"/v1/webhook-subscriptions/{sub.pk}/replay", body, format="json")


def test_replay_queues_what_the_subscription_never_got_and_nothing_twice(api, org):
    sub = make_subscription(org, events=("call.ended", "contact.created"), enabled=False)
    missed = [emit(org=org, type="call.ended", data={"n": n}) for n in range(2)]
    not_received = emit(org=org, type="call.recording_ready", data={})
    sub.enabled = True
    sub.save()
    delivered = emit(org=org, type="contact.created", data={})
    Delivery.objects.filter(event=delivered).update(status="succeeded")
    failed = emit(org=org, type="call.ended", data={"n": "failed"})
    Delivery.objects.filter(event=failed).update(status="failed", attempt_count=10)
    pending = emit(org=org, type="call.ended", data={"n": "pending"})

    response = replay(api, sub)
    assert (response.status_code, response.json()) == (202, {"data": {"queued": 3}})
    rows = {d.event_id: d for d in Delivery.objects.filter(subscription=sub)}
    assert {e.id for e in missed} | {failed.id} <= set(rows)
    assert all(rows[e.id].status == "pending" for e in (*missed, failed))
    assert rows[failed.id].attempt_count == 0
    assert not_received.id not in rows
    assert rows[delivered.id].status == "succeeded" and rows[pending.id].status == "pending"
    assert replay(api, sub).json() == {"data": {"queued": 0}}


def test_types_narrow_a_replay_and_until_bounds_it(api, org):
    sub = make_subscription(org, events=("call.ended", "contact.created"), enabled=False)
    ended = emit(org=org, type="call.ended", data={})
    created = emit(org=org, type="contact.created", data={})
    sub.enabled = True
    sub.save()
    assert replay(api, sub, types=["contact.created", "call.recording_ready"]).json() == {"data": {"queued": 1}}
    assert Delivery.objects.get(subscription=sub).event_id == created.id
    Event.objects.filter(pk=ended.pk).update(created_at=timezone.now() - timedelta(minutes=30))
    until = iso_ms(timezone.now() - timedelta(minutes=40))
    assert replay(api, sub, until=until).json() == {"data": {"queued": 0}}
    # One replay in progress per subscription (docs/api.md#quotas, tests/webhooks/test_quotas.py): the first one's
    # delivery is done before the next replay queues anything.
    Delivery.objects.filter(subscription=sub).update(status="succeeded")
    assert replay(api, sub).json() == {"data": {"queued": 1}}


def test_events_from_before_the_subscription_existed_are_replayed(api, org):
    event = emit(org=org, type="call.ended", data={})
    sub = make_subscription(org)
    assert replay(api, sub).json() == {"data": {"queued": 1}}
    assert Delivery.objects.get(subscription=sub).event_id == event.id


def test_a_disabled_subscription_is_409_and_nothing_is_queued(api, org):
    sub = make_subscription(org, enabled=False)
    emit(org=org, type="call.ended", data={})
    response = replay(api, sub)
    assert (response.status_code, response.json()) == (409, {"error": "conflict", "details": {"field": "enabled"}})
    assert not Delivery.objects.filter(subscription=sub).exists()


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({"since": "last week"}, {"since": [
            "Datetime has wrong format. Use one of these formats instead: "
            "YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]."]}),
        ({"since": "2020-01-01T00:00:00Z"}, {"since": ["Must be within the last 30 days."]}),
        ({"until": "2020-01-01T00:00:00Z"}, {"until": ["Must not be before since."]}),
        ({"types": ["call.ended", "call.ended"]}, {"types": ["Event types must not repeat."]}),
        ({"types": ["call.started"]}, {"types": [
            "Unknown event type(s): call.started. Allowed: call.ended, call.recording_ready, "
            "call_order.status_changed, call.callback_requested, call.message_taken, call.escalation_triggered, "
            "call.appointment_booked, contact.created, meeting.outcome_approved, call.content_deleted, "
            "contact.erased, alert.triggered, alert.resolved, "
            "location.line_silent, webhook_subscription.failing, webhook_subscription.disabled, "
            "webhook_subscription.recovered."]}),
        ({"types": []}, {"types": ["This list may not be empty."]}),
    ],
)
def test_bad_replays_are_400_with_field_errors(api, org, body, errors):
    emit(org=org, type="call.ended", data={})
    sub = make_subscription(org)
    response = replay(api, sub, **body)
    assert (response.status_code, response.json()) == (400, validation(errors))
    assert not Delivery.objects.filter(subscription=sub).exists()


def test_an_unknown_body_field_is_refused(api, org):
    response = replay(api, make_subscription(org), extra=1)
    assert response.status_code == 400
    assert response.json()["details"]["formErrors"] == ["Unrecognized key(s) in object: 'extra'"]


def test_another_orgs_subscription_is_404_and_queues_nothing(api, other_org):
    theirs = make_subscription(other_org, enabled=False)
    emit(org=other_org, type="call.ended", data={})
    theirs.enabled = True
    theirs.save()
    response = replay(api, theirs)
    assert (response.status_code, response.json()) == (404, {"error": "not_found"})
    assert not Delivery.objects.filter(subscription=theirs).exists()


@pytest.mark.django_db(transaction=True)
def test_loss_drill_events_missed_while_disabled_arrive_after_a_replay(api, org, allow_local, celery_worker_factory):
    """Disabled, three order calls, re-enabled, replay since before the calls: a real receiver verifies the three
    call.ended with their original ids and bytes; a second replay queues 0; contact.created is never sent."""
    with Receiver() as receiver:
        created = api.post("/v1/webhook-subscriptions", {"url": receiver.url, "events": ["call.ended"]}, format="json")
        sub_id, secret = created.json()["data"]["id"], created.json()["secret"]
        assert api.patch(f"/v1/webhook-subscriptions/{sub_id}", {"enabled": False}, format="json").status_code == 200
        before = iso_ms(timezone.now() - timedelta(seconds=1))
        runtime = Runtime(org)
        for _ in range(3):
            call_id, _ = runtime.start()
            assert runtime.complete(call_id).status_code in (200, 201)
        ended = {e.id: bytes(e.payload) for e in Event.objects.filter(organization=org, type="call.ended")}
        assert len(ended) == 3 and Event.objects.filter(organization=org, type="contact.created").exists()
        assert not Delivery.objects.filter(subscription_id=sub_id).exists()  # lost, before replay existed

        celery_worker_factory(concurrency=1, beat=True, env=FAST_WORKER)
        assert api.patch(f"/v1/webhook-subscriptions/{sub_id}", {"enabled": True}, format="json").status_code == 200
        response = api.post(f"/v1/webhook-subscriptions/{sub_id}/replay", {"since": before}, format="json")
        assert (response.status_code, response.json()) == (202, {"data": {"queued": 3}})
        calls = receiver.wait_for(3)
        assert {c["headers"]["webhook-id"]: c["body"] for c in calls} == ended
        for call in calls:
            assert Webhook(secret).verify(call["body"], call["headers"])["type"] == "call.ended"
            assert json.loads(call["body"])["id"] == call["headers"]["webhook-id"]
        again = api.post(f"/v1/webhook-subscriptions/{sub_id}/replay", {"since": before}, format="json")
        assert again.json() == {"data": {"queued": 0}}
        assert len(receiver.calls) == 3
