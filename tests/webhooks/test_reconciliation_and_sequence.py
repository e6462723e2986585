"""A receiver proves it missed nothing: `GET /v1/webhook-subscriptions/{id}/reconciliation?date=` hashes the sorted
ids of the day's events due to the subscription, and the receiver recomputes that hash from the deliveries it got
(docs/webhooks.md#reconciliation). And every event about a call carries `sequence` (1, 2, 3 ... in emit order), the
same in every retry and replay of it, so a receiver drops a stale update without needing ordered delivery."""

import hashlib
import json
import uuid
from collections import defaultdict
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.support.receiver import Receiver
from tests.support.runtime import Runtime
from tests.support.webhooks import attempt_delivery, make_subscription
from webhooks.models import Delivery, Event
from webhooks.replay import subscription_replay
from webhooks.services import emit, emit_many

pytestmark = pytest.mark.usefixtures("allow_local")
CALL_TYPES = ("call.ended", "call.recording_ready", "call.callback_requested", "call.message_taken", "contact.created")


def deliver_everything_due(org):
    due = Delivery.objects.filter(organization=org, status="pending", next_attempt_at__lte=timezone.now())
    for pk in due.values_list("pk", flat=True):
        attempt_delivery(pk)


def make_retries_due(org):
    Delivery.objects.filter(organization=org, status="pending").update(next_attempt_at=timezone.now())


def receivers_digest(receiver, day: str) -> str:
    """What a receiver computes from what it got: the ids (`webhook-id`) of the day's events it answered 2xx, each
    once, sorted, joined by "\\n", hashed with SHA-256."""
    ids = set()
    for call in receiver.calls:
        body = json.loads(call["body"])
        if body["created_at"].startswith(day) and call["headers"]["webhook-id"] in receiver.ids_answered_ok():
            ids.add(call["headers"]["webhook-id"])
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()


def test_the_reconciliation_hash_equals_the_receivers_own(api, org):
    with Receiver() as receiver:
        subscription = make_subscription(org, url=receiver.url, events=("call.ended", "contact.created"))
        for n in range(5):
            emit(org=org, type="call.ended", data={"call_id": f"c{n}"})
        emit(org=org, type="contact.created", data={"contact_id": "x"})
        emit(org=org, type="call.recording_ready", data={"call_id": "r"})  # not chosen: not due to it
        deliver_everything_due(org)
    day = timezone.now().date().isoformat()
    response = api.get(f"/v1/webhook-subscriptions/{subscription.pk}/reconciliation", {"date": day})
    assert response.status_code == 200, response.json()
    data = response.json()["data"]
    assert data == {"date": day, "event_count": 6, "event_ids_sha256": receivers_digest(receiver, day),
                    "delivered": 6, "pending": 0, "failed": 0}
    yesterday = (timezone.now() - timedelta(days=1)).date().isoformat()
    response = api.get(f"/v1/webhook-subscriptions/{subscription.pk}/reconciliation", {"date": yesterday})
    assert response.json()["data"]["event_count"] == 0


def test_a_missed_event_shows_in_the_counts_and_the_hash(api, org):
    refused = set()

    def status(call):
        body = json.loads(call["body"])
        if body["data"]["call_id"] == "c2":
            refused.add(call["headers"]["webhook-id"])
            return 500
        return 200

    with Receiver(status=status) as receiver:
        subscription = make_subscription(org, url=receiver.url, events=("call.ended",))
        for n in range(4):
            emit(org=org, type="call.ended", data={"call_id": f"c{n}"})
        deliver_everything_due(org)
    day = timezone.now().date().isoformat()
    data = api.get(f"/v1/webhook-subscriptions/{subscription.pk}/reconciliation", {"date": day}).json()["data"]
    assert (data["event_count"], data["delivered"], data["pending"], data["failed"]) == (4, 3, 1, 0)
    assert data["event_ids_sha256"] != receivers_digest(receiver, day)
    all_ids = set(Delivery.objects.filter(subscription=subscription).values_list("event_id", flat=True))
    assert data["event_ids_sha256"] == hashlib.sha256("\n".join(sorted(all_ids)).encode()).hexdigest()
    assert len(refused) == 1


def test_an_empty_day_and_bad_dates(api, org):
    subscription = make_subscription(org, url="https://hooks.example.com/in")
    url = f"/v1/webhook-subscriptions/{subscription.pk}/reconciliation"
    assert api.get(url, {"date": "2020-01-01"}).json()["data"] == {
        "date": "2020-01-01", "event_count": 0, "event_ids_sha256": hashlib.sha256(b"").hexdigest(),
        "delivered": 0, "pending": 0, "failed": 0}
    for bad in ({}, {"date": "2026-13-01"}, {"date": "yesterday"}, {"date": "2026-11-01", "extra": "1"}):
        response = api.get(url, bad)
        assert response.status_code == 400
        assert response.json()["error"] == "Validation failed"
        assert set(response.json()["details"]["fieldErrors"]) <= {"date", "extra"}


def test_a_bad_date_is_a_400_before_the_subscription_is_looked_for(api, org):
    url = f"/v1/webhook-subscriptions/{uuid.uuid4()}/reconciliation"
    assert (api.get(url, {"date": "1999-12-31"}).status_code, api.get(url, {"date": "1999-12-31"}).json()) == (
        400, {"error": "Validation failed", "details": {
            "formErrors": [], "fieldErrors": {"date": ["Enter a date from 2000-01-01 to 2100-12-31."]}}})
    response = api.get(url, {"date": "2026-11-01"})
    assert (response.status_code, response.json()) == (404, {"error": "not_found"})


def test_sequence_strictly_increases_per_call_and_is_the_same_across_retries_and_replays(org, settings):
    seen_once = set()

    def fail_first_try(call):
        webhook_id = call["headers"]["webhook-id"]
        if webhook_id in seen_once:
            return 200
        seen_once.add(webhook_id)
        return 503

    runtime = Runtime(org)
    with Receiver(status=fail_first_try) as live, Receiver() as late:
        make_subscription(org, url=live.url, events=CALL_TYPES)
        calls = []
        for n in range(2):
            call_id, _ = runtime.start(from_number=f"+1415555010{n}")
            assert runtime.event(call_id, type="callback_requested", label="cb", data={
                "requested_window": "asap", "reason": "Call back"}).status_code == 201
            assert runtime.complete(call_id, messages=[{"message": "Ring me"}]).status_code in (200, 201)
            assert runtime.upload(call_id).status_code in (200, 201)
            calls.append(runtime.call(call_id))
        deliver_everything_due(org)  # every first try fails
        make_retries_due(org)
        deliver_everything_due(org)  # the retries succeed
        replayed = make_subscription(org, url=late.url, events=CALL_TYPES)
        assert subscription_replay(subscription=replayed, since=timezone.now() - timedelta(hours=1)) > 0
        deliver_everything_due(org)

    received = [json.loads(call["body"]) for call in live.calls + late.calls]
    by_event = defaultdict(set)
    for body in received:
        by_event[body["id"]].add(body["data"]["sequence"])
    assert all(len(numbers) == 1 for numbers in by_event.values())  # retries and replays carry the same number
    assert len(live.calls) == 2 * len(by_event) and len(late.calls) == len(by_event)

    for call in calls:
        emitted = list(Event.objects.filter(call_id=call.pk).order_by("created_at", "id"))
        sequences = [event.data["sequence"] for event in emitted]
        assert sorted(sequences) == list(range(1, len(emitted) + 1)) and len(emitted) >= 4
        for earlier, later in zip(emitted, emitted[1:], strict=False):
            if earlier.created_at < later.created_at:
                assert earlier.data["sequence"] < later.data["sequence"]
        assert {event.pk for event in emitted} <= set(by_event)


def test_a_batch_of_call_events_takes_each_call_its_next_numbers_in_as_many_statements_as_one(org):
    """emit_many (a purge's call.content_deleted) numbers its events like emit would, one after the other in the
    order given, and its statements do not grow with the batch."""
    first, second = uuid.uuid4(), uuid.uuid4()
    make_subscription(org, events=("call.content_deleted",))
    emit(org=org, type="call.content_deleted", data={"call_id": str(first)})
    items = [({"call_id": str(call)}, None) for call in (second, first, second)]
    with CaptureQueriesContext(connection) as small:
        events = emit_many(org=org, type="call.content_deleted", items=items)
    assert [(e.call_id, e.data["sequence"]) for e in events] == [(second, 1), (first, 2), (second, 2)]
    many = [({"call_id": str(uuid.uuid4())}, None) for _ in range(30)]
    with CaptureQueriesContext(connection) as large:
        events = emit_many(org=org, type="call.content_deleted", items=many)
    assert [e.data["sequence"] for e in events] == [1] * 30
    assert len(large.captured_queries) == len(small.captured_queries)
    assert Delivery.objects.filter(event__in=events).count() == 30
