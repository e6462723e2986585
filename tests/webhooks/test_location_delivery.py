"""Event delivery by location (issue 28, part 4): a subscription limited to locations receives only the events at
those locations, an organization-wide one receives every event, location-less ones included; replay and recover
follow the same rule, with real receivers and a real worker where delivery is what is tested."""

from datetime import timedelta

import pytest
from django.utils import timezone

from core.timefmt import iso_ms
from orgs.models import Location
from tests.support.receiver import Receiver
from tests.support.runtime import Runtime
from tests.support.waiting import wait_until
from tests.support.webhooks import FAST_WORKER, make_subscription
from webhooks.models import Delivery, Event
from webhooks.services import emit

ALL_TYPES = ("call.ended", "contact.created", "call.callback_requested", "call.message_taken")


@pytest.fixture
def places(org):
    return (Location.objects.create(organization=org, name="Mission", timezone="UTC"),
            Location.objects.create(organization=org, name="Castro", timezone="UTC"))


def receivers_of(event) -> set:
    return set(Delivery.objects.filter(event=event).values_list("subscription_id", flat=True))


def test_emit_fans_out_by_location(org, other_org, places):
    l1, l2 = places
    at_l1 = make_subscription(org, events=ALL_TYPES, location_ids=[l1.pk])
    at_both = make_subscription(org, events=ALL_TYPES, location_ids=[l2.pk, l1.pk])
    everywhere = make_subscription(org, events=ALL_TYPES)
    make_subscription(other_org, events=ALL_TYPES)

    assert receivers_of(emit(org=org, type="call.ended", data={}, location_id=l1.pk)) == {
        at_l1.pk, at_both.pk, everywhere.pk}
    assert receivers_of(emit(org=org, type="call.ended", data={}, location_id=l2.pk)) == {at_both.pk, everywhere.pk}
    assert receivers_of(emit(org=org, type="contact.created", data={})) == {everywhere.pk}


def _call(runtime, location, **completion):
    call_id, _ = runtime.start(location_id=location.pk if location else None,
                               from_number=f"+1415555{Event.objects.count():04d}")
    assert runtime.event(call_id, type="callback_requested", label="Callback",
                         data={"requested_window": "asap", "reason": "x"}).status_code == 201
    assert runtime.complete(call_id, messages=[{"message": "Call me"}], **completion).status_code in (200, 201)
    return runtime.call(call_id)


@pytest.mark.django_db(transaction=True)
def test_a_location_subscription_receives_exactly_its_locations_events_and_an_org_wide_one_all(
    org, places, allow_local, celery_worker_factory
):
    l1, l2 = places
    with Receiver() as scoped, Receiver() as whole:
        at_l1 = make_subscription(org, url=scoped.url, events=ALL_TYPES, location_ids=[l1.pk])
        everywhere = make_subscription(org, url=whole.url, events=ALL_TYPES)
        worker = celery_worker_factory(concurrency=2, env=FAST_WORKER)  # first: it empties the queue as it starts
        runtime = Runtime(org)
        calls = [_call(runtime, l1), _call(runtime, l2), _call(runtime, l1), _call(runtime, None)]
        located = {call.location_id: set(Event.objects.filter(call_id=call.pk).values_list("id", flat=True))
                   for call in calls}
        l1_events = {e.id for e in Event.objects.filter(location_id=l1.pk)}
        assert len(l1_events) == 8 and located[l2.pk] and located[None]  # each call: 4 events, a new contact each

        try:
            whole.wait_for(16, timeout=60)
            wait_until(lambda: not Delivery.objects.exclude(status="succeeded").exists(), 60, "every delivery done")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{worker.log()}") from None
        assert sorted(c["headers"]["webhook-id"] for c in scoped.calls) == sorted(l1_events)
        assert sorted(c["headers"]["webhook-id"] for c in whole.calls) == sorted(Event.objects.values_list("id",
                                                                                                            flat=True))
        assert set(Delivery.objects.filter(subscription=at_l1).values_list("event_id", flat=True)) == l1_events
        assert Delivery.objects.filter(subscription=everywhere).count() == 16


def _replay(api, sub):
    return api.post(f"/v1/webhook-subscriptions/{sub.pk}/replay",
                    {"since": iso_ms(timezone.now() - timedelta(hours=1))}, format="json")


def test_replay_queues_only_the_subscriptions_locations_events(api, org, places):
    l1, l2 = places
    at_l1 = make_subscription(org, events=ALL_TYPES, location_ids=[l1.pk], enabled=False)
    everywhere = make_subscription(org, events=ALL_TYPES, enabled=False)
    mine = emit(org=org, type="call.ended", data={}, location_id=l1.pk)
    emit(org=org, type="call.ended", data={}, location_id=l2.pk)
    emit(org=org, type="contact.created", data={})
    for sub in (at_l1, everywhere):
        sub.enabled = True
        sub.save()

    response = _replay(api, at_l1)
    assert (response.status_code, response.json()) == (202, {"data": {"queued": 1}})
    assert list(Delivery.objects.filter(subscription=at_l1).values_list("event_id", flat=True)) == [mine.id]
    assert _replay(api, everywhere).json() == {"data": {"queued": 3}}


def test_recover_requeues_only_what_the_subscription_covers_now(api, org, places):
    l1, l2 = places
    sub = make_subscription(org, events=ALL_TYPES, location_ids=[l1.pk, l2.pk])
    kept = emit(org=org, type="call.ended", data={}, location_id=l1.pk)
    emit(org=org, type="call.ended", data={}, location_id=l2.pk)
    Delivery.objects.filter(subscription=sub).update(status="failed", attempt_count=10)
    sub.location_ids = [l1.pk]  # narrowed since: L2's failures are no longer its to get
    sub.save()

    response = api.post(f"/v1/webhook-subscriptions/{sub.pk}/recover",
                        {"since": iso_ms(timezone.now() - timedelta(hours=1))}, format="json")
    assert (response.status_code, response.json()) == (202, {"data": {"requeued": 1}})
    assert list(Delivery.objects.filter(subscription=sub, status="pending").values_list("event_id", flat=True)) == [
        kept.id]

