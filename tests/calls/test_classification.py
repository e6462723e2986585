"""Classification rules: only real engagement is scored and announced; unscorable calls stay listed and silent."""

import pytest

from calls.models import Call
from contacts.models import Contact
from contacts.services import contact_create
from tests.support.events import assert_valid_event, event_types, events
from tests.support.runtime import T0, completion, iso

UNSCORABLE = ["robocall", "automated_dialer", "wrong_number_hangup"]
MESSAGES = [{"message": "Please call me back about the catering order."}]


def test_real_engagement_is_scored_and_emits_contact_ended_and_message(runtime, org):
    call_id, _ = runtime.start()
    response = runtime.complete(call_id, outcome="message", messages=MESSAGES, score=88)
    assert response.status_code == 200
    call = runtime.call(call_id)
    assert call.scorable is True and call.score == 88 and call.classification == "real_engagement"
    assert event_types(org) == ["call.ended", "call.message_taken", "contact.created"]
    for event in events(org):
        assert_valid_event(event)
    contact = Contact.objects.get()
    assert call.contact_id == contact.id
    assert contact.first_call_id == call.id and contact.source == "inbound_call"
    assert events(org, "contact.created")[0].data == {
        "contact_id": str(contact.id), "phone": "+14155550123", "name": "Jordan Miles",
        "email": "jordan@example.com", "first_call_id": str(call.id),
        "first_call_at": "2026-11-20T12:01:35.000Z", "source": "inbound_call", "sequence": 1,
    }


@pytest.mark.parametrize("classification", UNSCORABLE)
def test_unscorable_calls_are_unscored_and_emit_no_ended_message_or_contact(runtime, org, api, classification):
    call_id, _ = runtime.start()
    response = runtime.complete(call_id, classification=classification, outcome="message", messages=MESSAGES,
                                score=90)
    assert response.status_code == 200
    call = runtime.call(call_id)
    assert call.scorable is False and call.score is None
    assert event_types(org) == []
    assert not Contact.objects.exists()
    listed = api.get("/v1/calls").json()["data"]
    assert [(c["id"], c["classification"], c["scorable"], c["score"]) for c in listed] == [
        (str(call.id), classification, False, None)
    ]


@pytest.mark.parametrize("classification", UNSCORABLE)
def test_mid_call_events_are_not_filtered_by_a_later_classification(runtime, org, classification):
    call_id, _ = runtime.start()
    runtime.event(call_id, type="callback_requested", label="Requested a callback",
                  data={"requested_window": "morning", "reason": "Call me"})
    runtime.complete(call_id, classification=classification, outcome="callback")
    assert event_types(org) == ["call.callback_requested"]


def test_no_contact_is_created_when_the_org_turned_auto_saving_off(runtime, org):
    org.auto_save_contacts = False
    org.save()
    call_id, _ = runtime.start()
    runtime.complete(call_id)
    assert "contact.created" not in event_types(org)
    assert not Contact.objects.exists()
    ended = events(org, "call.ended")[0]
    assert ended.data["contact_id"] is None


def test_a_returning_caller_is_linked_at_start_and_no_contact_is_created(runtime, org):
    contact = contact_create(org=org, phone_number="+14155550123", name="Jordan", source="api")
    call_id, response = runtime.start()
    assert response.json()["data"]["contact_id"] == str(contact.id)
    runtime.event(call_id, type="callback_requested", label="x", data={"reason": "Call me"})
    runtime.complete(call_id)
    assert event_types(org) == ["call.callback_requested", "call.ended"]
    assert events(org)[0].data["contact_id"] == str(contact.id)
    assert events(org)[1].data["contact_id"] == str(contact.id)
    assert Contact.objects.count() == 1


def test_a_withheld_number_gets_no_contact(runtime, org):
    call_id, _ = runtime.start(from_number=None)
    runtime.complete(call_id, outcome="info")
    ended = events(org, "call.ended")[0]
    assert ended.data["from_number"] is None and ended.data["contact_id"] is None
    assert event_types(org) == ["call.ended"]
    assert_valid_event(ended)


def test_call_ended_carries_exactly_the_spec_fields_and_the_order_extension(runtime, org, settings):
    settings.DASHBOARD_URL = "https://app.example.com"
    call_id, _ = runtime.start()
    runtime.event(call_id, label="Placed an order")
    runtime.complete(call_id)
    call = runtime.call(call_id)
    [ended] = events(org, "call.ended")
    assert_valid_event(ended)
    data = ended.data
    assert data["call_url"] == f"https://app.example.com/calls/{call.id}"
    assert data["order_status"] == "new"
    order = data["order"]
    assert order["call_order_number"] == 1
    assert order["items"][0]["line_total_cents"] == 2 * (1650 + 450 + 200)
    assert order["items"][1]["line_total_cents"] == 800
    assert order["subtotal_cents"] == order["total_cents"] == 2 * 2300 + 800
    assert order["placed_at"] == "2026-11-20T12:01:35.000Z"
    assert order["expected_fulfillment_at"] == "2026-11-20T12:26:35.000Z"
    assert order["cancellation_deadline_at"] == "2026-11-20T12:11:35.000Z"
    assert order["canceled_at"] is None and order["canceled_by"] is None
    assert data["started_at"] == iso(T0).replace("Z", ".000Z") and data["duration_seconds"] == 95
    assert data["trail"] == ["Placed an order"]


def test_a_call_that_is_not_an_order_has_no_order_extension(runtime, org):
    call_id, _ = runtime.start()
    runtime.complete(call_id, outcome="booking")
    [ended] = events(org, "call.ended")
    assert "order" not in ended.data and "order_status" not in ended.data
    assert_valid_event(ended)


def test_order_numbers_count_up_per_org(runtime, other_runtime, org):
    for _ in range(3):
        call_id, _ = runtime.start()
        runtime.complete(call_id)
    theirs, _ = other_runtime.start()
    other_runtime.complete(theirs)
    numbers = sorted(Call.objects.filter(organization=org).values_list("order__call_order_number", flat=True))
    assert numbers == [1, 2, 3]
    assert other_runtime.call(theirs).order.call_order_number == 1


def test_completion_refuses_an_out_of_range_score_and_unknown_classification(runtime):
    call_id, _ = runtime.start()
    assert runtime.complete(call_id, score=101).status_code == 400
    assert runtime.complete(call_id, classification="spam").status_code == 400
    assert runtime.call(call_id).status == "in_progress"


def test_completion_payload_round_trips_to_the_call(runtime):
    call_id, _ = runtime.start()
    body = completion(outcome="info", disposition="transferred")
    runtime.client.post(f"{runtime.prefix}/calls/{call_id}/complete", body, format="json")
    call = runtime.call(call_id)
    assert call.disposition == "transferred" and call.transcript == body["transcript"]
    assert call.outcome_tags == ["order", "pickup"]
