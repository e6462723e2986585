"""GET /v1/calls/{id}/events: every event a call caused, oldest first, with one delivery entry per subscription."""

import json

from tests.support.events import assert_valid_event
from tests.support.webhooks import make_subscription
from webhooks.models import Event


def test_a_calls_events_come_oldest_first_with_their_deliveries(api, org, runtime):
    sub = make_subscription(org, events=("call.ended", "call_order.status_changed"))
    call_id, _ = runtime.start()
    assert runtime.complete(call_id).status_code in (200, 201)
    call = runtime.call(call_id)
    assert api.patch(f"/v1/calls/{call.pk}/order-status", {"status": "in_progress"}, format="json").status_code == 200
    other_call, _ = runtime.start()
    runtime.complete(other_call)

    response = api.get(f"/v1/calls/{call.pk}/events")
    assert response.status_code == 200
    body = response.json()
    stored = list(Event.objects.filter(call_id=call.pk).order_by("created_at", "id"))
    assert {e.type for e in stored} == {"call.ended", "contact.created", "call_order.status_changed"}
    assert [e["id"] for e in body["data"]] == [e.id for e in stored]
    assert (body["has_more"], body["next_cursor"]) == (False, None)
    for item, event in zip(body["data"], stored, strict=True):
        assert_valid_event(event)
        deliveries = item.pop("deliveries")
        assert item == json.loads(event.payload)
        if event.type == "contact.created":
            assert deliveries == []  # the subscription does not receive it
        else:
            assert [(d["subscription_id"], d["status"]) for d in deliveries] == [(str(sub.pk), "pending")]


def test_another_orgs_call_is_404(other_api, runtime):
    call_id, _ = runtime.start()
    runtime.complete(call_id)
    response = other_api.get(f"/v1/calls/{runtime.call(call_id).pk}/events")
    assert (response.status_code, response.json()) == (404, {"error": "not_found"})
