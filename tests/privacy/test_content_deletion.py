"""DELETE /v1/calls/{id}/content and /recording: the tombstone exactly, the recording gone from storage, the stored
event bodies carrying ids only, `call.content_deleted`, the audit entry; 204 twice; scopes, locations, isolation."""

import csv
import io
import json
import os
from datetime import datetime

import pytest

from audit.models import AuditEvent
from calls.models import Call, Message, Order
from tests.factories import make_key
from tests.support.clients import key_client
from tests.support.runtime import place_call
from webhooks.models import Event

pytestmark = pytest.mark.django_db

CALLER_WORDS = ("Jordan", "pepperoni", "patio", "four people", "jordan@example.com", "Any allergies", "Pickup or")


def stored_text(call: Call) -> str:
    """Everything stored about the call that could hold the caller's words: its row, messages, order, events."""
    row = Call.objects.filter(pk=call.pk).values().get()
    parts = [json.dumps(row, default=str)]
    parts += [json.dumps(m, default=str) for m in Message.objects.filter(call=call).values()]
    parts += [json.dumps(o, default=str) for o in Order.objects.filter(call=call).values()]
    parts += [bytes(e).decode() for e in Event.objects.filter(call_id=call.pk).values_list("payload", flat=True)]
    return "\n".join(parts)


def test_deleting_the_content_leaves_exactly_the_tombstone(api, runtime, party_size):
    call = place_call(runtime)
    before = api.get(f"/v1/calls/{call.pk}").json()["data"]
    recording_path = call.recording.file.path
    assert os.path.exists(recording_path)
    assert "Jordan" in stored_text(call)

    response = api.delete(f"/v1/calls/{call.pk}/content")
    assert (response.status_code, response.content) == (204, b"")

    after = api.get(f"/v1/calls/{call.pk}").json()["data"]
    assert after["content_deleted_reason"] == "request"
    assert after["content_deleted_at"].endswith("Z")
    kept = {key: value for key, value in before.items()
            if key not in {"summary", "transcript", "quality_checks", "unanswered_questions", "fields", "order",
                           "has_recording", "content_deleted_at", "content_deleted_reason"}}
    assert {key: after[key] for key in kept} == kept  # ids, times, figures, from_number: as they were
    assert after["summary"] is None
    assert after["transcript"] == []
    assert after["has_recording"] is False
    assert after["unanswered_questions"] == []
    assert [(c["name"], c["verdict"], c["evidence"]) for c in after["quality_checks"]] == [
        (c["name"], c["verdict"], []) for c in before["quality_checks"]]
    assert after["fields"] == {"party_size": {**before["fields"]["party_size"], "evidence": None,
                                              "evidence_verified": False}}
    assert after["fields"]["party_size"]["value"] == 4
    order_before, order_after = before["order"], after["order"]
    assert order_after["order_answers"] == []
    assert [item["answers"] for item in order_after["items"]] == [[], []]
    assert ([(i["name"], i["quantity"], i["line_total_cents"]) for i in order_after["items"]]
            == [(i["name"], i["quantity"], i["line_total_cents"]) for i in order_before["items"]])
    assert order_after["total_cents"] == order_before["total_cents"]
    message = Message.objects.get(call=call)
    assert (message.message, message.caller_name) == ("", None)
    # The unanswered question still counts (analytics), as a null the API does not show.
    assert Call.objects.get(pk=call.pk).unanswered_questions == [None]

    assert not os.path.exists(recording_path)
    text = stored_text(call)
    assert [word for word in CALLER_WORDS if word in text] == []

    deleted = Event.objects.get(type="call.content_deleted")
    # The call's fifth event (docs/webhooks.md#sequence), after the four of its completion and recording.
    assert deleted.data == {"call_id": str(call.pk), "location_id": None, "parts": ["transcript", "recording"],
                            "reason": "request", "sequence": 5}
    ended = Event.objects.get(type="call.ended")
    assert ended.data == {"call_id": str(call.pk), "location_id": None, "contact_id": str(call.contact_id),
                          "sequence": 2, "content_deleted": True, "content_deleted_reason": "request"}
    entry = AuditEvent.objects.get(action="call.content_deleted")
    assert (entry.target_id, entry.changes) == (str(call.pk), {"parts": [None, ["transcript", "recording"]],
                                                               "reason": [None, "request"]})

    again = api.delete(f"/v1/calls/{call.pk}/content")
    assert (again.status_code, again.content) == (204, b"")
    assert Event.objects.filter(type="call.content_deleted").count() == 1
    assert AuditEvent.objects.filter(action="call.content_deleted").count() == 1
    assert api.get(f"/v1/calls/{call.pk}").json()["data"] == after


def test_deleting_the_recording_keeps_the_transcript(api, runtime, party_size):
    call = place_call(runtime)
    path = call.recording.file.path

    assert api.delete(f"/v1/calls/{call.pk}/recording").status_code == 204

    assert not os.path.exists(path)
    data = api.get(f"/v1/calls/{call.pk}").json()["data"]
    assert (data["has_recording"], data["content_deleted_at"], data["summary"] is not None) == (False, None, True)
    assert api.get(f"/v1/calls/{call.pk}/recording").json() == {"error": "recording_not_ready"}
    assert Event.objects.get(type="call.content_deleted").data["parts"] == ["recording"]
    assert api.delete(f"/v1/calls/{call.pk}/recording").status_code == 204
    assert Event.objects.filter(type="call.content_deleted").count() == 1


def test_the_list_and_the_export_show_the_tombstone(api, runtime, party_size):
    call = place_call(runtime)
    api.delete(f"/v1/calls/{call.pk}/content")
    item = api.get("/v1/calls").json()["data"][0]
    assert (item["summary"], item["content_deleted_reason"]) == (None, "request")
    assert item["content_deleted_at"] == api.get(f"/v1/calls/{call.pk}").json()["data"]["content_deleted_at"]
    export = api.get("/v1/exports/calls.csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(export.streaming_content).decode())))
    assert rows[0]["content_deleted_reason"] == "request"
    exported = datetime.fromisoformat(rows[0]["content_deleted_at"])  # the export's timestamps carry their offset
    assert exported == datetime.fromisoformat(item["content_deleted_at"].replace("Z", "+00:00"))


def test_a_late_recording_of_a_deleted_call_is_refused_quietly(api, runtime, party_size):
    call = place_call(runtime, recording=False)
    api.delete(f"/v1/calls/{call.pk}/content")
    response = runtime.upload(call.runtime_call_id)
    assert response.status_code == 201 and response.json()["data"]["id"] is None
    assert not Call.objects.filter(pk=call.pk, recording__isnull=False).exists()
    assert not Event.objects.filter(type="call.recording_ready").exists()


def test_refusals_change_nothing(org, admin, runtime, read_api, other_api, party_size, locations):
    call = place_call(runtime, location=locations[0])
    elsewhere = key_client(make_key(org, scope="read_write", admin=admin, location_ids=[locations[1].pk])[1])
    for client, status, body in (
        (read_api, 403, {"error": "insufficient_scope", "required": "write"}),
        (other_api, 404, {"error": "not_found"}),
        (elsewhere, 404, {"error": "not_found"}),
    ):
        for part in ("content", "recording"):
            response = client.delete(f"/v1/calls/{call.pk}/{part}")
            assert (response.status_code, response.json()) == (status, body)
    assert Call.objects.get(pk=call.pk).content_deleted_at is None
    assert not Event.objects.filter(type="call.content_deleted").exists()
    here = key_client(make_key(org, scope="read_write", admin=admin, location_ids=[locations[0].pk])[1])
    assert here.delete(f"/v1/calls/{call.pk}/content").status_code == 204


def test_an_unknown_call_is_404(api):
    for path in ("/v1/calls/00000000-0000-4000-8000-000000000000/content", "/v1/calls/nope/recording"):
        response = api.delete(path)
        assert (response.status_code, response.json()) == (404, {"error": "not_found"})
