"""Completion and recording may arrive in either order, and retries of either change nothing."""

import pytest

from calls.models import Recording
from tests.support.events import assert_valid_event, event_types, events


def _final_state(runtime, api, call_id):
    call = runtime.call(call_id)
    detail = api.get(f"/v1/calls/{call.id}").json()["data"]
    recording = api.get(f"/v1/calls/{call.id}/recording")
    shown = {key: value for key, value in detail.items() if key not in ("id", "contact_id")}
    shown["order"] = {k: v for k, v in (detail["order"] or {}).items() if k != "call_id"}
    return shown, recording.status_code, sorted(event_types(runtime.org))


@pytest.mark.parametrize("order", [("complete", "upload"), ("upload", "complete")])
def test_recording_and_completion_in_either_order_end_in_the_same_state(runtime, api, order):
    call_id, _ = runtime.start()
    for step in order:
        response = runtime.complete(call_id) if step == "complete" else runtime.upload(call_id)
        assert response.status_code in (200, 201)
    for step in order:  # retries of both, in the same order
        assert (runtime.complete(call_id) if step == "complete" else runtime.upload(call_id)).status_code == 200
    shown, recording_status, types = _final_state(runtime, api, call_id)
    assert recording_status == 200
    assert types == ["call.ended", "call.recording_ready", "contact.created"]
    assert shown["has_recording"] is True and shown["status"] == "completed"
    assert Recording.objects.count() == 1
    for event in events(runtime.org):
        assert_valid_event(event)


def test_recording_first_is_visible_before_the_call_completes(runtime, api, org):
    call_id, _ = runtime.start()
    runtime.upload(call_id)
    call = runtime.call(call_id)
    [ready] = events(org)
    assert ready.type == "call.recording_ready" and ready.data["call_id"] == str(call.id)
    assert api.get(f"/v1/calls/{call.id}/recording").status_code == 200
    listed = api.get("/v1/calls").json()["data"][0]
    assert listed["status"] == "in_progress" and listed["has_recording"] is True and listed["ended_at"] is None
    runtime.complete(call_id)
    assert event_types(org) == ["call.ended", "call.recording_ready", "contact.created"]


def test_the_recording_is_not_ready_until_uploaded(runtime, api):
    call_id, _ = runtime.start()
    runtime.complete(call_id)
    call = runtime.call(call_id)
    response = api.get(f"/v1/calls/{call.id}/recording")
    assert response.status_code == 404 and response.json() == {"error": "recording_not_ready"}
