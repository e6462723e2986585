import json

import pytest
from django.db import transaction

from tests.support.webhooks import make_subscription
from webhooks.errors import UnknownEventType
from webhooks.models import Delivery, Event
from webhooks.services import emit


def test_emit_fixes_the_envelope_bytes_once(org):
    event = emit(org=org, type="call.ended", data={"call_id": "c1", "n": 1})
    stored = Event.objects.get(pk=event.pk)
    assert stored.payload == event.payload
    assert isinstance(stored.payload, bytes)
    body = json.loads(stored.payload)
    assert list(body) == ["id", "type", "created_at", "api_version", "data"]
    assert body["id"] == event.id and event.id.startswith("evt_")
    assert body["type"] == "call.ended" and stored.type == "call.ended"
    assert body["api_version"] == "v1"
    assert body["data"] == {"call_id": "c1", "n": 1} == stored.data
    assert body["created_at"].endswith("Z") and len(body["created_at"]) == 24
    assert stored.organization == org


def test_emit_refuses_unknown_types_and_writes_nothing(org):
    with pytest.raises(UnknownEventType):
        emit(org=org, type="call.started", data={})
    assert not Event.objects.exists()


def test_emit_writes_one_delivery_per_enabled_matching_subscription_of_the_org(org, other_org):
    match = make_subscription(org, events=["call.ended", "contact.created"])
    make_subscription(org, events=["contact.created"])
    make_subscription(org, events=["call.ended"], enabled=False)
    make_subscription(other_org, events=["call.ended"])
    event = emit(org=org, type="call.ended", data={})
    assert list(Delivery.objects.filter(event=event).values_list("subscription_id", flat=True)) == [match.pk]


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_change_emits_nothing(org):
    make_subscription(org, events=["call.ended"])
    with pytest.raises(RuntimeError), transaction.atomic():
        emit(org=org, type="call.ended", data={})
        raise RuntimeError
    assert not Event.objects.exists() and not Delivery.objects.exists()
