"""GET /v1/events and /v1/events/{id}: the org's events of the last 30 days exactly as delivered, filters, cursor
pages, deliveries, retention and tenancy; and the call each event names (Event.call_id)."""

import json
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.timefmt import iso_ms
from tests.support.webhooks import make_subscription
from webhooks.models import Delivery, Event
from webhooks.services import emit


def validation(field_errors):
    return {"error": "Validation failed", "details": {"formErrors": [], "fieldErrors": field_errors}}


def _at(event, when):
    when = when.replace(microsecond=when.microsecond // 1000 * 1000)  # as emit stores it: milliseconds
    Event.objects.filter(pk=event.pk).update(created_at=when)
    event.refresh_from_db()
    return event


@pytest.fixture
def three(org):
    """Three events of `org` a minute apart (oldest first), two about one call."""
    call = uuid.uuid4()
    now = timezone.now()
    made = [
        emit(org=org, type="call.ended", data={"call_id": str(call), "n": 1}),
        emit(org=org, type="contact.created", data={"first_call_id": str(call), "n": 2}),
        emit(org=org, type="meeting.outcome_approved", data={"n": 3}),
    ]
    return [_at(event, now - timedelta(minutes=3 - n)) for n, event in enumerate(made)]


def test_emit_records_the_call_each_event_is_about(org):
    call = uuid.uuid4()
    assert emit(org=org, type="call.ended", data={"call_id": str(call)}).call_id == call
    assert emit(org=org, type="contact.created", data={"first_call_id": str(call)}).call_id == call
    assert emit(org=org, type="call_order.status_changed", data={"call_id": str(call)}).call_id == call
    assert emit(org=org, type="meeting.outcome_approved", data={"meeting_id": str(call)}).call_id is None


def test_the_feed_lists_envelopes_exactly_as_delivered_newest_first(api, org, three, other_org):
    emit(org=other_org, type="call.ended", data={"n": "other"})
    response = api.get("/v1/events")
    assert response.status_code == 200
    body = response.json()
    assert body == {
        "data": [json.loads(event.payload) for event in reversed(three)], "has_more": False, "next_cursor": None,
    }
    assert set(body["data"][0]) == {"id", "type", "created_at", "api_version", "data"}


def test_filters_type_call_and_an_inclusive_time_range(api, three):
    ids = lambda r: [e["id"] for e in r.json()["data"]]  # noqa: E731
    assert ids(api.get("/v1/events", {"type": "contact.created"})) == [three[1].id]
    assert ids(api.get("/v1/events", {"call_id": str(three[0].call_id)})) == [three[1].id, three[0].id]
    since, until = iso_ms(three[0].created_at), iso_ms(three[1].created_at)
    assert ids(api.get("/v1/events", {"since": since, "until": until})) == [three[1].id, three[0].id]
    assert ids(api.get("/v1/events", {"since": iso_ms(three[2].created_at)})) == [three[2].id]


def test_pages_with_a_cursor_without_skipping_or_repeating(api, three):
    first = api.get("/v1/events", {"limit": 2}).json()
    assert [e["id"] for e in first["data"]] == [three[2].id, three[1].id] and first["has_more"] is True
    second = api.get("/v1/events", {"limit": 2, "cursor": first["next_cursor"]}).json()
    assert [e["id"] for e in second["data"]] == [three[0].id]
    assert (second["has_more"], second["next_cursor"]) == (False, None)


def test_a_page_is_one_query_whatever_its_size(api, org):
    for n in range(30):
        emit(org=org, type="call.ended", data={"n": n})
    api.get("/v1/me")  # the key's last_used_at is written once, on first use
    counts = []
    for limit in (1, 30):
        with CaptureQueriesContext(connection) as queries:
            assert api.get("/v1/events", {"limit": limit}).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({"type": "call.started"}, {"type": ['"call.started" is not a valid choice.']}),
        ({"since": "yesterday"}, {"since": [
            "Datetime has wrong format. Use one of these formats instead: "
            "YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]."]}),
        ({"call_id": "nope"}, {"call_id": ["Must be a valid UUID."]}),
        ({"since": "2026-11-02T00:00:00Z", "until": "2026-11-01T00:00:00Z"}, {"until": ["Must not be before since."]}),
        ({"kind": "x"}, {"kind": ["Unknown query parameter."]}),
    ],
)
def test_bad_filters_are_400_with_field_errors(api, params, errors):
    response = api.get("/v1/events", params)
    assert (response.status_code, response.json()) == (400, validation(errors))


def test_one_event_carries_its_deliveries(api, org, allow_local):
    sub = make_subscription(org)
    event = emit(org=org, type="call.ended", data={"n": 1})
    Delivery.objects.filter(event=event).update(
        status="failed", attempt_count=10, last_status_code=503, last_attempt_at=event.created_at
    )
    response = api.get(f"/v1/events/{event.id}")
    assert response.status_code == 200
    assert response.json() == {"data": {**json.loads(event.payload), "deliveries": [{
        "subscription_id": str(sub.pk), "status": "failed", "attempts": 10,
        "last_attempt_at": iso_ms(event.created_at), "last_status_code": 503,
    }]}}


def test_events_past_the_retention_are_gone_from_feed_and_detail(api, org, three):
    old = _at(emit(org=org, type="call.ended", data={}), timezone.now() - timedelta(days=30, minutes=1))
    assert old.id not in [e["id"] for e in api.get("/v1/events").json()["data"]]
    response = api.get(f"/v1/events/{old.id}")
    assert (response.status_code, response.json()) == (404, {"error": "not_found"})


def test_another_orgs_event_and_an_unknown_id_are_the_same_404(api, other_api, three):
    for client, path in ((other_api, f"/v1/events/{three[0].id}"), (api, "/v1/events/evt_unknown")):
        response = client.get(path)
        assert (response.status_code, response.json()) == (404, {"error": "not_found"})
    assert other_api.get("/v1/events").json()["data"] == []
