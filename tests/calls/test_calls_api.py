"""/v1/calls: the list (pagination, filters, constant queries), detail, recording URL, order status."""

import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from calls.models import Call, Order
from calls.recordings import sign_recording_token
from calls.services.lifecycle import call_complete, call_start
from calls.services.orders import order_cancel_by_caller, order_set_status
from core.sensitive import DETECTOR_VERSION
from knowledge.services import location_create
from tests.support.events import assert_valid_event, events
from tests.support.races import run_together
from tests.support.runtime import T0, Runtime
from webhooks.models import Event


def _completed_call(runtime, *, started_at=T0, outcome="order", **overrides):
    call_id, _ = runtime.start(started_at=started_at, **{k: overrides.pop(k) for k in ["location_id", "from_number"]
                                                         if k in overrides})
    from tests.support.runtime import completion, iso

    body = completion(outcome=outcome, ended_at=iso(started_at + timedelta(seconds=60)), **overrides)
    assert runtime.client.post(f"{runtime.prefix}/calls/{call_id}/complete", body, format="json").status_code == 200
    return runtime.call(call_id)


def _bulk_calls(org, count):
    """Many calls quickly through the services (orders and recordings on some), for list tests."""
    from calls.services.orders import OrderInput

    created = []
    for i in range(count):
        runtime_id = f"bulk-{i}"
        call_start(org=org, runtime_call_id=runtime_id, started_at=T0 + timedelta(minutes=i),
                   from_number=f"+1415555{i % 10000:04d}" if i % 3 else None)
        is_order = i % 2 == 0
        order = OrderInput(profile_id="6d1f4b52-6a43-4c1e-9d8e-2f3a1c0b7e11", profile_name="Phone", items=[
            {"catalog_item_id": "0b6f0f7e-4c7b-4a52-9d55-0d3c2c5c9a01", "name": "Pizza", "quantity": 1,
             "unit_price_cents": 1000}], order_answers=[], fulfillment_estimate_value=20,
            fulfillment_estimate_unit="minutes") if is_order else None
        call, _ = call_complete(org=org, runtime_call_id=runtime_id, ended_at=T0 + timedelta(minutes=i, seconds=30),
                                classification="real_engagement", outcome="order" if is_order else "info",
                                order=order)
        created.append(call)
    return created


# --- list ----------------------------------------------------------------------------------------------------


def test_list_shows_items_newest_first_with_the_decided_fields(runtime, api):
    older = _completed_call(runtime, started_at=T0)
    newer = _completed_call(runtime, started_at=T0 + timedelta(hours=1), outcome="info")
    runtime.upload(older.runtime_call_id)
    body = api.get("/v1/calls").json()
    assert body["has_more"] is False and body["next_cursor"] is None
    assert [c["id"] for c in body["data"]] == [str(newer.id), str(older.id)]
    item = body["data"][1]
    assert set(item) == {
        "id", "location_id", "contact_id", "started_at", "ended_at", "duration_seconds", "direction",
        "from_number", "disposition", "classification", "scorable", "score", "summary", "outcome",
        "outcome_tags", "trail", "has_recording", "order_status", "status", "redaction", "content_deleted_at",
        "content_deleted_reason",
    }
    assert item["has_recording"] is True and item["order_status"] == "new"
    assert item["redaction"] == {"detector_version": DETECTOR_VERSION, "counts": {}, "recording_withheld": False}
    assert (item["content_deleted_at"], item["content_deleted_reason"]) == (None, None)
    assert item["started_at"] == "2026-11-20T12:00:00.000Z"
    assert body["data"][0]["order_status"] is None and body["data"][0]["has_recording"] is False


def test_list_pages_with_a_cursor_without_skips_or_repeats(org, api):
    calls = _bulk_calls(org, 7)
    seen, cursor = [], None
    while True:
        response = api.get("/v1/calls", {"limit": 3, **({"cursor": cursor} if cursor else {})})
        body = response.json()
        seen += [c["id"] for c in body["data"]]
        if not body["has_more"]:
            break
        cursor = body["next_cursor"]
    assert seen == [str(c.id) for c in sorted(calls, key=lambda c: c.started_at, reverse=True)]


def test_list_filters(runtime, api, org):
    location = location_create(org=org, name="Mission", address="1 Mission St", timezone="UTC",
                               phone_number="+14155550100")
    a = _completed_call(runtime, started_at=T0, location_id=location.id)
    b = _completed_call(runtime, started_at=T0 + timedelta(hours=2), outcome="info", from_number="+14155550199")

    def ids(**params):
        return [c["id"] for c in api.get("/v1/calls", params).json()["data"]]

    assert ids(location_id=str(location.id)) == [str(a.id)]
    assert ids(outcome="info") == [str(b.id)]
    assert ids(since="2026-11-20T13:00:00Z") == [str(b.id)]
    assert ids(until="2026-11-20T13:00:00Z") == [str(a.id)]
    assert ids(contact_id=str(b.contact_id)) == [str(b.id)]


@pytest.mark.parametrize("params", [
    {"limit": 0}, {"limit": 101}, {"limit": "x"}, {"cursor": "forged"}, {"since": "yesterday"},
    {"location_id": "not-a-uuid"}, {"bogus": "1"},
])
def test_list_refuses_bad_query_parameters(api, params):
    response = api.get("/v1/calls", params)
    assert response.status_code == 400 and response.json()["error"] == "Validation failed"
    assert set(response.json()["details"]["fieldErrors"]) == set(params)


def test_list_runs_a_constant_number_of_queries(org, api):
    _bulk_calls(org, 101)
    for call in Call.objects.all()[:40]:
        Runtime(org).upload(call.runtime_call_id)
    api.get("/v1/calls")  # warm up: the key's last_used_at write happens once a minute
    counts = {}
    for limit in (1, 100):
        with CaptureQueriesContext(connection) as queries:
            response = api.get("/v1/calls", {"limit": limit})
        assert response.status_code == 200 and len(response.json()["data"]) == limit
        counts[limit] = len(queries)
    assert counts[1] == counts[100] <= 3


def test_another_orgs_calls_are_never_listed(runtime, other_runtime, api):
    _completed_call(other_runtime)
    assert api.get("/v1/calls").json()["data"] == []


# --- detail ----------------------------------------------------------------------------------------------------


def test_detail_has_transcript_checks_trail_and_the_order(runtime, api, org):
    call_id, _ = runtime.start()
    runtime.event(call_id, label="Placed an order")
    runtime.complete(call_id)
    call = runtime.call(call_id)
    data = api.get(f"/v1/calls/{call.id}").json()["data"]
    assert data["transcript"][1] == {
        "speaker": "caller", "text": "I'd like a large pepperoni pizza for pickup, please.", "offset_seconds": 3.5
    }
    assert data["quality_checks"][0] == {"name": "Gave a ready time", "verdict": "pass",
                                         "evidence": ["ready in about 25 minutes"], "gap_type": None,
                                         "verification": "verified"}
    assert data["trail"] == ["Placed an order"]
    [ended] = events(org, "call.ended")
    assert data["order"] == {"call_id": str(call.id), "order_status": "new", **ended.data["order"]}


def test_detail_of_a_non_order_call_has_order_null(runtime, api):
    call = _completed_call(runtime, outcome="info")
    assert api.get(f"/v1/calls/{call.id}").json()["data"]["order"] is None


@pytest.mark.parametrize("path", ["", "/recording"])
@pytest.mark.parametrize("call_id", ["not-a-uuid", "00000000-0000-0000-0000-000000000000"])
def test_unknown_call_ids_are_404(api, call_id, path):
    response = api.get(f"/v1/calls/{call_id}{path}")
    assert response.status_code == 404 and response.json() == {"error": "not_found"}


def test_another_orgs_call_is_404_everywhere_and_nothing_changes(other_runtime, api, other_org):
    theirs = _completed_call(other_runtime)
    other_runtime.upload(theirs.runtime_call_id)
    before = Event.objects.count()
    for response in (
        api.get(f"/v1/calls/{theirs.id}"),
        api.get(f"/v1/calls/{theirs.id}/recording"),
        api.patch(f"/v1/calls/{theirs.id}/order-status", {"status": "canceled"}, format="json"),
    ):
        assert response.status_code == 404 and response.json() == {"error": "not_found"}
    assert Order.objects.get(call=theirs).status == "new" and Event.objects.count() == before


# --- recording URL ---------------------------------------------------------------------------------------------


def test_recording_url_is_minted_per_request_and_serves_the_bytes(runtime, api, settings):
    settings.BASE_URL = "http://testserver"
    call = _completed_call(runtime)
    runtime.upload(call.runtime_call_id, audio=b"RIFF-real-audio-bytes", duration=42)
    response = api.get(f"/v1/calls/{call.id}/recording")
    assert response.status_code == 200
    data = response.json()["data"]
    assert set(data) == {"url", "expires_at", "content_type", "duration_seconds"}
    assert data["content_type"] == "audio/wav" and data["duration_seconds"] == 42
    assert data["url"].startswith("http://testserver/recordings/")
    assert data["expires_at"].endswith("Z")
    download = APIClient().get(data["url"].removeprefix("http://testserver"))
    assert download.status_code == 200 and download["Content-Type"] == "audio/wav"
    assert b"".join(download.streaming_content) == b"RIFF-real-audio-bytes"
    time.sleep(1.01)
    assert api.get(f"/v1/calls/{call.id}/recording").json()["data"]["url"] != data["url"]


def test_an_expired_or_forged_recording_url_is_refused(runtime):
    call = _completed_call(runtime)
    runtime.upload(call.runtime_call_id)
    recording = call.recording
    client = APIClient()
    expired = sign_recording_token(recording.id, issued_at=int(time.time()) - 3601)
    assert client.get("/recordings/", {"token": expired}).status_code == 403
    fresh = sign_recording_token(recording.id)
    forged = fresh[:-2] + ("AA" if not fresh.endswith("AA") else "BB")
    assert client.get("/recordings/", {"token": forged}).status_code == 403
    other = sign_recording_token("00000000-0000-0000-0000-000000000000")
    assert client.get("/recordings/", {"token": other}).status_code == 404
    assert client.get("/recordings/", {"token": fresh}).status_code == 200


def test_the_old_path_form_of_a_recording_link_is_gone(runtime):
    """A token in the path is what access logs record: only `?token=` is served."""
    call = _completed_call(runtime)
    runtime.upload(call.runtime_call_id)
    fresh = sign_recording_token(call.recording.id)
    assert APIClient().get(f"/recordings/{fresh}").status_code == 404
    assert APIClient().get("/recordings/", {"token": fresh}).status_code == 200


def test_recording_url_uses_s3_presigning_when_the_storage_is_s3(runtime, api, monkeypatch):
    call = _completed_call(runtime)
    runtime.upload(call.runtime_call_id)
    from calls import recordings

    calls = []

    def fake_url(self, name, parameters=None, expire=None, http_method=None):
        calls.append((name, expire, parameters))
        return f"https://bucket.s3.amazonaws.com/{name}?X-Amz-Expires={expire}"

    monkeypatch.setattr(recordings, "_is_s3", lambda storage: True)
    from django.core.files.storage import FileSystemStorage

    monkeypatch.setattr(FileSystemStorage, "url", fake_url)
    data = api.get(f"/v1/calls/{call.id}/recording").json()["data"]
    assert data["url"].endswith("X-Amz-Expires=3600")
    assert (calls[-1][1], calls[-1][2]) == (3600, {"ResponseContentType": "audio/wav"}), calls


# --- order status ----------------------------------------------------------------------------------------------

TRANSITIONS = [
    ("new", "in_progress", 200, True),
    ("new", "fulfilled", 200, True),
    ("new", "canceled", 200, True),
    ("new", "new", 200, False),
    ("in_progress", "fulfilled", 200, True),
    ("in_progress", "canceled", 200, True),
    ("in_progress", "in_progress", 200, False),
    ("in_progress", "new", 409, False),
    ("fulfilled", "fulfilled", 200, False),
    ("fulfilled", "new", 409, False),
    ("fulfilled", "in_progress", 409, False),
    ("fulfilled", "canceled", 409, False),
    ("canceled", "canceled", 200, False),
    ("canceled", "new", 409, False),
    ("canceled", "in_progress", 409, False),
    ("canceled", "fulfilled", 409, False),
]


@pytest.mark.parametrize(("start", "target", "status", "emits"), TRANSITIONS)
def test_order_status_transitions(runtime, api, org, write_key, start, target, status, emits):
    call = _completed_call(runtime)
    Order.objects.filter(call=call).update(status=start)
    before = Event.objects.filter(type="call_order.status_changed").count()
    response = api.patch(f"/v1/calls/{call.id}/order-status", {"status": target}, format="json")
    assert response.status_code == status
    changes = events(org, "call_order.status_changed")
    assert len(changes) - before == (1 if emits else 0)
    if status == 409:
        assert response.json()["error"] == "invalid_transition"
        assert Order.objects.get(call=call).status == start
        return
    assert response.json()["data"]["order_status"] == target
    if emits:
        change = changes[-1]
        assert_valid_event(change)
        assert change.data["previous_status"] == start and change.data["new_status"] == target
        assert change.data["changed_by"] == str(write_key[0].id)
        assert change.data["canceled_by"] == ("team_via_api" if target == "canceled" else None)
        order = Order.objects.get(call=call)
        assert (order.canceled_at is not None) == (target == "canceled")


@pytest.mark.parametrize("body", [{"status": "shipped"}, {}, {"status": "canceled", "extra": 1}, []])
def test_order_status_refuses_bad_bodies(runtime, api, body):
    call = _completed_call(runtime)
    response = api.patch(f"/v1/calls/{call.id}/order-status", body, format="json")
    assert response.status_code == 400 and response.json()["error"] == "Validation failed"
    assert Order.objects.get(call=call).status == "new"


def test_order_status_on_a_call_without_an_order_is_404(runtime, api):
    call = _completed_call(runtime, outcome="info")
    response = api.patch(f"/v1/calls/{call.id}/order-status", {"status": "fulfilled"}, format="json")
    assert response.status_code == 404 and response.json() == {"error": "not_found"}


def test_order_status_needs_a_write_key(runtime, read_api):
    call = _completed_call(runtime)
    response = read_api.patch(f"/v1/calls/{call.id}/order-status", {"status": "canceled"}, format="json")
    assert response.status_code == 403
    assert response.json() == {"error": "insufficient_scope", "required": "write"}
    assert Order.objects.get(call=call).status == "new"


def test_the_dashboard_source_is_recorded_as_canceled_by(runtime, org):
    call = _completed_call(runtime)
    order, changed = order_set_status(call=call, status="canceled", changed_by="42", source="team_via_dashboard")
    assert changed and order.canceled_by == "team_via_dashboard"
    assert events(org, "call_order.status_changed")[0].data["changed_by"] == "42"


# --- caller cancels by phone -----------------------------------------------------------------------------------


def test_a_caller_cancels_within_the_window(runtime, org):
    call = _completed_call(runtime)
    deadline = call.order.cancellation_deadline_at
    order, changed = order_cancel_by_caller(org=org, phone_number="+14155550123", now=deadline - timedelta(seconds=1))
    assert changed and order.status == "canceled" and order.canceled_by == "caller_via_phone"
    [change] = events(org, "call_order.status_changed")
    assert change.data["canceled_by"] == "caller_via_phone" and change.data["changed_by"] is None
    again, changed_again = order_cancel_by_caller(org=org, phone_number="+14155550123")
    assert not changed_again and len(events(org, "call_order.status_changed")) == 1


def test_a_caller_cannot_cancel_after_the_window(runtime, org):
    from calls.errors import CancellationWindowClosed

    call = _completed_call(runtime)
    with pytest.raises(CancellationWindowClosed):
        order_cancel_by_caller(org=org, phone_number="+14155550123",
                               now=call.order.cancellation_deadline_at + timedelta(seconds=1))
    assert Order.objects.get(call=call).status == "new" and not events(org, "call_order.status_changed")


def test_a_caller_cancels_through_a_tool_event_on_a_new_call(runtime, org):
    from django.utils import timezone

    now = timezone.now()
    first = _completed_call(runtime, started_at=now - timedelta(minutes=3))
    second, _ = runtime.start(started_at=now)
    response = runtime.event(second, type="order_cancel_requested", label="Canceled an order", event_id="c1")
    assert response.status_code == 201
    assert response.json()["data"]["result"] == {"call_id": str(first.id), "call_order_number": 1,
                                                 "order_status": "canceled"}
    assert runtime.event(second, type="order_cancel_requested", label="Canceled an order",
                         event_id="c1").status_code == 200
    assert len(events(org, "call_order.status_changed")) == 1
    late = _completed_call(runtime, started_at=now - timedelta(hours=2), from_number="+14155550188")
    third, _ = runtime.start(started_at=now, from_number="+14155550188")
    response = runtime.event(third, type="order_cancel_requested", label="Canceled an order")
    assert response.status_code == 409 and response.json()["error"] == "cancellation_window_closed"
    assert Order.objects.get(call=late).status == "new"


# --- the race ----------------------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_concurrent_order_status_changes_each_report_the_status_they_replaced(org, write_key):
    runtime = Runtime(org)
    call = _completed_call(runtime)
    targets = ["in_progress", "fulfilled", "canceled", "in_progress", "fulfilled", "canceled"]

    def change(status):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {write_key[1]}")
        return client.patch(f"/v1/calls/{call.id}/order-status", {"status": status}, format="json").status_code

    results = run_together(*(lambda status=status: change(status) for status in targets))
    assert set(results) <= {200, 409}
    changes = events(org, "call_order.status_changed")
    assert changes, results
    replaced = [change_event.data["previous_status"] for change_event in changes]
    # Under the row lock no two changes can have replaced the same status, and they form one chain from `new`.
    assert len(replaced) == len(set(replaced))
    by_previous = {change_event.data["previous_status"]: change_event.data["new_status"] for change_event in changes}
    chain, walked = "new", 0
    while chain in by_previous:
        chain, walked = by_previous[chain], walked + 1
    assert walked == len(changes)
    assert Order.objects.get(call=call).status == chain
    assert results.count(200) >= len(changes)
