"""/v1/callbacks, /v1/messages, /v1/escalations and /v1/orders: the follow-ups the calls announced, exactly the
event's fields plus their handling; handled through the API shows in the dashboard inbox and the reverse (one
service); filters, pages and bad input."""

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from calls.models import CallbackRequest, Escalation, Message
from core.timefmt import iso_ms
from knowledge.services import escalation_rule_create, location_create, team_member_create
from tests.support.events import events

CALLBACK = {"requested_window": "afternoon", "reason": "Catering for 40", "callback_number": "+14155550199"}


def validation(field_errors):
    return {"error": "Validation failed", "details": {"formErrors": [], "fieldErrors": field_errors}}


@pytest.fixture
def follow_ups(org, runtime):
    """One callback, one message and one escalation, on one call; and a message of an unscorable call."""
    member = team_member_create(org=org, name="Maria Lopez", phone_number="+14155550112")
    rule = escalation_rule_create(org=org, name="Manager", destination_type="team_member",
                                  destination_team_member=member, keywords=["manager"])
    call_id, _ = runtime.start()
    assert runtime.event(call_id, type="callback_requested", label="cb", data=CALLBACK).status_code == 201
    assert runtime.event(call_id, type="escalation_triggered", label="esc", data={
        "rule_id": str(rule.id), "triggered_by": "keyword", "context": "manager please"}).status_code == 201
    runtime.complete(call_id, outcome="message",
                     messages=[{"message": "Call me", "for_team_member_id": str(member.id)}])
    robo, _ = runtime.start()
    runtime.complete(robo, classification="robocall", outcome="message", messages=[{"message": "BUY NOW"}])
    return {"call": runtime.call(call_id), "robocall": runtime.call(robo)}


@pytest.mark.parametrize(("path", "event_type", "model"), [
    ("/v1/callbacks", "call.callback_requested", CallbackRequest),
    ("/v1/messages", "call.message_taken", Message),
    ("/v1/escalations", "call.escalation_triggered", Escalation),
])
def test_each_item_is_its_events_fields_plus_its_handling(read_api, org, follow_ups, path, event_type, model):
    [event] = events(org, event_type)
    item = model.objects.get(call=follow_ups["call"])
    body = read_api.get(path).json()
    # The event's number among its call's events numbers the event, not the item: the item carries the rest.
    announced = dict(event.data)
    assert announced.pop("sequence") >= 1
    assert body == {"data": [{
        "id": str(item.pk), **announced, "handled": False, "handled_at": None, "handled_by": None,
        "created_at": iso_ms(item.created_at),
    }], "has_more": False, "next_cursor": None}
    assert read_api.get(f"{path}/{item.pk}").json() == {"data": body["data"][0]}


def test_an_unscorable_calls_message_is_not_listed(read_api, follow_ups):
    listed = read_api.get("/v1/messages").json()["data"]
    robo_message = Message.objects.get(call=follow_ups["robocall"])
    assert [m["call_id"] for m in listed] == [str(follow_ups["call"].pk)]
    assert read_api.get(f"/v1/messages/{robo_message.pk}").status_code == 404


def test_handled_through_the_api_shows_in_the_inbox_and_the_reverse(api, write_key, follow_ups, admin,
                                                                     admin_client):
    callback = CallbackRequest.objects.get()
    response = api.patch(f"/v1/callbacks/{callback.pk}", {"handled": True}, format="json")
    assert response.status_code == 200
    data = response.json()["data"]
    key = write_key[0]
    assert (data["handled"], data["handled_by"]) == (True, {"type": "api_key", "id": str(key.pk), "name": key.name})
    inbox = admin_client.get("/inbox/?show=handled").content.decode()
    assert f"through API key {key.name}" in inbox

    message = Message.objects.get(call=follow_ups["call"])
    admin_client.post(f"/inbox/message/{message.pk}/handled")
    via_dashboard = api.get(f"/v1/messages/{message.pk}").json()["data"]
    assert via_dashboard["handled_by"] == {"type": "user", "id": str(admin.pk), "name": admin.email}

    reopened = api.patch(f"/v1/callbacks/{callback.pk}", {"handled": False}, format="json").json()["data"]
    assert (reopened["handled"], reopened["handled_at"], reopened["handled_by"]) == (False, None, None)


def test_filters(read_api, org, follow_ups, runtime):
    other_call, _ = runtime.start()
    runtime.event(other_call, type="callback_requested", label="cb", data=CALLBACK)
    CallbackRequest.objects.filter(call=follow_ups["call"]).update(handled_at=follow_ups["call"].started_at)
    ids = lambda **q: [c["call_id"] for c in read_api.get("/v1/callbacks", q).json()["data"]]  # noqa: E731
    assert ids(handled="true") == [str(follow_ups["call"].pk)]
    assert ids(handled="false") == [str(runtime.call(other_call).pk)]
    assert ids(call_id=str(follow_ups["call"].pk)) == [str(follow_ups["call"].pk)]
    assert ids(location_id=str(uuid.uuid4())) == []
    first = CallbackRequest.objects.order_by("created_at").first()
    assert len(ids(since=iso_ms(first.created_at))) == 2
    assert ids(until=iso_ms(first.created_at + timedelta(milliseconds=1))) == [str(first.call_id)]


@pytest.mark.parametrize(("params", "errors"), [
    ({"handled": "maybe"}, {"handled": ["Must be a valid boolean."]}),
    ({"location_id": "x"}, {"location_id": ["Must be a valid UUID."]}),
    ({"colour": "red"}, {"colour": ["Unknown query parameter."]}),
])
def test_bad_filters_are_400(read_api, params, errors):
    response = read_api.get("/v1/callbacks", params)
    assert (response.status_code, response.json()) == (400, validation(errors))


def test_bad_patches_are_400_and_a_read_key_is_403(api, read_api, follow_ups):
    callback = CallbackRequest.objects.get()
    bad = api.patch(f"/v1/callbacks/{callback.pk}", {"handled": "perhaps"}, format="json")
    assert (bad.status_code, bad.json()) == (400, validation({"handled": ["Expected a boolean."]}))
    refused = read_api.patch(f"/v1/callbacks/{callback.pk}", {"handled": True}, format="json")
    assert (refused.status_code, refused.json()) == (403, {"error": "insufficient_scope", "required": "write"})
    assert CallbackRequest.objects.get().handled_at is None


def test_another_orgs_follow_ups_are_404(other_api, follow_ups):
    for path, model in (("callbacks", CallbackRequest), ("escalations", Escalation)):
        item = model.objects.get()
        assert other_api.get(f"/v1/{path}/{item.pk}").status_code == 404
        assert other_api.patch(f"/v1/{path}/{item.pk}", {"handled": True}, format="json").status_code == 404
        assert model.objects.get().handled_at is None
    assert other_api.get("/v1/callbacks").json()["data"] == []


def test_a_page_is_a_constant_number_of_queries(read_api, runtime):
    for _ in range(6):
        call_id, _ = runtime.start()
        runtime.event(call_id, type="callback_requested", label="cb", data=CALLBACK)
    read_api.get("/v1/me")
    counts = []
    for limit in (1, 6):
        with CaptureQueriesContext(connection) as queries:
            assert read_api.get("/v1/callbacks", {"limit": limit}).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]


# --- Orders ---------------------------------------------------------------------------------------------------


def test_orders_list_and_get_by_call(read_api, org, runtime):
    location = location_create(org=org, name="Main", address="1 Main St", timezone="UTC",
                               phone_number="+12125550100")
    placed = []
    for n in range(2):
        call_id, _ = runtime.start(location_id=location.id if n else None)
        runtime.complete(call_id)
        placed.append(runtime.call(call_id))
    [ended_first, ended_second] = [e.data for e in events(org, "call.ended")]
    body = read_api.get("/v1/orders").json()
    expected = [{"call_id": str(c.pk), "order_status": "new", **e["order"]}
                for c, e in zip(placed, (ended_first, ended_second), strict=True)]
    by_call = lambda orders: sorted(orders, key=lambda o: o["call_id"])  # noqa: E731
    assert by_call(body["data"]) == by_call(expected)
    placed_at = [o["placed_at"] for o in body["data"]]
    assert placed_at == sorted(placed_at, reverse=True)
    assert read_api.get(f"/v1/orders/{placed[0].pk}").json() == {"data": expected[0]}
    assert [o["call_id"] for o in read_api.get("/v1/orders", {"location_id": str(location.id)}).json()["data"]] == [
        str(placed[1].pk)]
    assert read_api.get("/v1/orders", {"status": "fulfilled"}).json()["data"] == []
    bad = read_api.get("/v1/orders", {"status": "lost"})
    assert (bad.status_code, bad.json()) == (400, validation({"status": ['"lost" is not a valid choice.']}))


def test_a_call_without_an_order_and_another_orgs_are_404(read_api, other_api, runtime):
    call_id, _ = runtime.start()
    runtime.complete(call_id, outcome="info")
    with_order, _ = runtime.start()
    runtime.complete(with_order)
    for client, call in ((read_api, runtime.call(call_id)), (other_api, runtime.call(with_order))):
        response = client.get(f"/v1/orders/{call.pk}")
        assert (response.status_code, response.json()) == (404, {"error": "not_found"})
