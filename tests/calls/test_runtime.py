"""The agent runtime API: token auth, org from the path, idempotency under retries, knowledge ETags, trail."""

import pytest
from rest_framework.test import APIClient

from calls.models import Booking, Call, CallbackRequest, Escalation, Message, Order, Recording, ToolEvent
from knowledge.services import calendar_create, escalation_rule_create, fact_create, team_member_create
from tests.support.events import event_types, events
from tests.support.races import run_together
from tests.support.runtime import T0, Runtime, completion, iso
from webhooks.models import Event

RUNTIME_WRITES = [
    ("post", "/calls", {"call_id": "rt-1", "started_at": "2026-11-20T12:00:00Z"}),
    ("post", "/calls/rt-1/events", {"event_id": "e1", "type": "tool", "label": "x"}),
    ("post", "/calls/rt-1/complete", completion()),
    ("put", "/calls/rt-1/recording", None),
    ("get", "/knowledge", None),
]
BAD_HEADERS = [
    None,
    "Bearer wrong-token",
    "bearer test-agent-runtime-token-0123456789abcdef",
    "Bearer  test-agent-runtime-token-0123456789abcdef",
    "Token test-agent-runtime-token-0123456789abcdef",
    "Bearer test-agent-runtime-token-0123456789abcde",
]


@pytest.mark.parametrize("header", BAD_HEADERS)
@pytest.mark.parametrize(("method", "path", "body"), RUNTIME_WRITES)
def test_runtime_refuses_a_wrong_or_missing_token_and_writes_nothing(org, header, method, path, body):
    client = APIClient()
    if header:
        client.credentials(HTTP_AUTHORIZATION=header)
    response = getattr(client, method)(f"/internal/agent/v1/orgs/{org.id}{path}", body, format="json")
    assert response.status_code == 401
    assert response.json() == {"error": "unauthorized"}
    assert response["WWW-Authenticate"] == "Bearer"
    assert not Call.objects.exists() and not ToolEvent.objects.exists() and not Event.objects.exists()


def test_an_org_key_is_not_a_runtime_token(org, write_key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {write_key[1]}")
    response = client.post(f"/internal/agent/v1/orgs/{org.id}/calls",
                           {"call_id": "rt-1", "started_at": iso(T0)}, format="json")
    assert response.status_code == 401
    assert not Call.objects.exists()


def test_an_unset_runtime_token_authenticates_nothing(org, settings):
    settings.AGENT_RUNTIME_TOKEN = ""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer ")
    assert client.get(f"/internal/agent/v1/orgs/{org.id}/knowledge").status_code == 401


@pytest.mark.parametrize("org_id", ["not-a-uuid", "00000000-0000-0000-0000-000000000000"])
def test_an_unknown_org_in_the_path_is_404(db, org_id):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer test-agent-runtime-token-0123456789abcdef")
    response = client.post(f"/internal/agent/v1/orgs/{org_id}/calls",
                           {"call_id": "rt-1", "started_at": iso(T0)}, format="json")
    assert response.status_code == 404 and response.json() == {"error": "not_found"}
    assert not Call.objects.exists()


def test_call_start_is_idempotent(runtime, org):
    call_id, first = runtime.start("rt-abc")
    _, again = runtime.start("rt-abc")
    assert first.status_code == 201 and again.status_code == 200
    assert first.json()["data"]["id"] == again.json()["data"]["id"]
    assert Call.objects.filter(organization=org).count() == 1
    data = first.json()["data"]
    assert data["call_id"] == "rt-abc" and data["status"] == "in_progress"


def test_the_same_runtime_call_id_in_two_orgs_is_two_calls(runtime, other_runtime):
    runtime.start("rt-shared")
    other_runtime.start("rt-shared")
    assert Call.objects.count() == 2


def test_another_orgs_call_is_not_reachable_through_this_orgs_path(runtime, other_runtime, other_org):
    other_runtime.start("rt-theirs")
    assert runtime.event("rt-theirs", type="tool", label="x").status_code == 404
    assert runtime.complete("rt-theirs").status_code == 404
    assert runtime.upload("rt-theirs").status_code == 404
    assert not ToolEvent.objects.exists() and not Recording.objects.exists()
    assert other_runtime.call("rt-theirs").status == "in_progress"


def test_call_start_normalizes_the_number_and_refuses_garbage(runtime):
    _, response = runtime.start("rt-1", from_number="(415) 555-0123")
    assert response.status_code == 201
    assert runtime.call("rt-1").from_number == "+14155550123"
    _, bad = runtime.start("rt-2", from_number="not a phone")
    assert bad.status_code == 400 and "from_number" in bad.json()["details"]["fieldErrors"]


def test_call_start_with_another_orgs_location_is_404_and_writes_nothing(runtime, other_org):
    from knowledge.services import location_create

    theirs = location_create(org=other_org, name="Theirs", address="1 Main St", timezone="UTC",
                             phone_number="+14155550100")
    _, response = runtime.start("rt-1", location_id=theirs.id)
    assert response.status_code == 404
    assert not Call.objects.exists()


def test_a_retried_tool_event_makes_one_row_and_one_event(runtime, org):
    call_id, _ = runtime.start()
    data = {"requested_window": "asap", "reason": "Billing question"}
    first = runtime.event(call_id, type="callback_requested", label="Requested a callback", event_id="ev-1", data=data)
    again = runtime.event(call_id, type="callback_requested", label="Requested a callback", event_id="ev-1", data=data)
    assert first.status_code == 201 and again.status_code == 200
    assert first.json()["data"]["result"] == again.json()["data"]["result"]
    assert CallbackRequest.objects.count() == 1
    assert event_types(org) == ["call.callback_requested"]


def test_a_retried_completion_emits_once(runtime, org):
    call_id, _ = runtime.start()
    first = runtime.complete(call_id)
    again = runtime.complete(call_id, summary="a different summary on retry")
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json()
    assert Order.objects.count() == 1
    assert sorted(event_types(org)) == ["call.ended", "contact.created"]


def test_a_retried_recording_upload_stores_once_and_emits_once(runtime, org):
    call_id, _ = runtime.start()
    first = runtime.upload(call_id)
    again = runtime.upload(call_id, audio=b"other bytes")
    assert first.status_code == 201 and again.status_code == 200
    assert first.json() == again.json()
    assert Recording.objects.count() == 1
    assert event_types(org) == ["call.recording_ready"]
    assert events(org)[0].data == {"call_id": str(runtime.call(call_id).id), "location_id": None,
                                   "duration_seconds": 42, "recording_available": True, "sequence": 1}


def test_a_completion_whose_start_was_lost_creates_the_call(runtime, org):
    response = runtime.complete("rt-lost", started_at=iso(T0), from_number="+14155550123", outcome="info")
    assert response.status_code == 200
    call = runtime.call("rt-lost")
    assert call.status == "completed" and call.from_number == "+14155550123"


def test_a_completion_for_an_unknown_call_without_start_fields_is_404(runtime):
    assert runtime.complete("rt-nowhere").status_code == 404
    assert not Call.objects.exists()


def test_the_trail_follows_firing_order_and_collapses_consecutive_duplicates(runtime):
    call_id, _ = runtime.start()
    runtime.event(call_id, label="Asked about hours", offset_seconds=1)
    runtime.event(call_id, label="Asked about hours", offset_seconds=2)
    runtime.event(call_id, label="", offset_seconds=3)
    runtime.event(call_id, label="Placed an order", offset_seconds=9)
    # Arrives late (a retry queue), but fired before the order.
    response = runtime.event(call_id, label="Asked about the menu", offset_seconds=5)
    runtime.event(call_id, label="Asked about hours", offset_seconds=12)
    assert response.json()["data"]["trail"] == ["Asked about hours", "Asked about the menu", "Placed an order"]
    assert runtime.call(call_id).trail == [
        "Asked about hours", "Asked about the menu", "Placed an order", "Asked about hours"
    ]


def test_a_call_without_tool_labels_has_an_empty_trail(runtime, org):
    call_id, _ = runtime.start()
    runtime.complete(call_id, outcome="info")
    assert events(org, "call.ended")[0].data["trail"] == []


def test_mid_call_events_go_out_at_once_before_completion(runtime, org):
    member = team_member_create(org=org, name="Sam Chen", phone_number="+14155550112")
    rule = escalation_rule_create(org=org, name="Manager", destination_type="team_member",
                                  destination_team_member=member, keywords=["manager"])
    calendar = calendar_create(org=org, name="Tables", timezone_name="America/Los_Angeles",
                               weekly_hours=[{"day": "wed", "start": "09:00", "end": "21:00"}])
    call_id, _ = runtime.start()
    assert runtime.event(call_id, type="escalation_triggered", label="Asked for a manager",
                         data={"rule_id": str(rule.id), "triggered_by": "keyword",
                               "context": "I want a manager"}).status_code == 201
    assert runtime.event(call_id, type="appointment_booked", label="Booked a table", data={
        "calendar_id": str(calendar.id), "start_at": "2026-11-25T19:00:00Z", "end_at": "2026-11-25T20:30:00Z",
        "contact_name": "Jordan Miles", "contact_email": "jordan@example.com",
    }).status_code == 201
    assert runtime.call(call_id).status == "in_progress"
    escalated, booked = events(org)
    call = runtime.call(call_id)
    assert escalated.data == {
        "call_id": str(call.id), "location_id": None, "rule_id": str(rule.id), "rule_name": "Manager",
        "destination_type": "team_member", "destination_id": str(member.id), "destination_phone": "+14155550112",
        "triggered_by": "keyword", "context": "I want a manager", "sequence": 1,
    }
    booking = Booking.objects.get()
    assert booked.data == {
        "booking_id": str(booking.id), "call_id": str(call.id), "calendar_id": str(calendar.id),
        "service_id": None, "service_name": None, "team_member_id": None, "location_id": None,
        "start_at": "2026-11-25T19:00:00.000Z", "end_at": "2026-11-25T20:30:00.000Z",
        "timezone": "America/Los_Angeles", "contact_id": None, "contact_name": "Jordan Miles",
        "contact_email": "jordan@example.com", "contact_phone": "+14155550123", "source": "voice_agent",
        "sequence": 2,
    }
    assert Escalation.objects.count() == 1


def test_tool_event_ids_of_another_org_are_404_and_write_nothing(runtime, other_org):
    rule = escalation_rule_create(org=other_org, name="Theirs", destination_type="phone",
                                  destination_phone="+14155550100", keywords=["manager"])
    call_id, _ = runtime.start()
    response = runtime.event(call_id, type="escalation_triggered", label="x",
                             data={"rule_id": str(rule.id), "triggered_by": "keyword"})
    assert response.status_code == 404
    assert not ToolEvent.objects.exists() and not Event.objects.exists()
    assert runtime.call(call_id).trail == []


@pytest.mark.parametrize("data", [
    {"requested_window": "custom", "reason": "x"},
    {"requested_window": "sometime", "reason": "x"},
    {"reason": "x", "surprise": 1},
    {"requested_window": "asap"},
])
def test_bad_tool_event_data_is_400_and_writes_nothing(runtime, data):
    call_id, _ = runtime.start()
    response = runtime.event(call_id, type="callback_requested", label="x", data=data)
    assert response.status_code == 400 and response.json()["error"] == "Validation failed"
    assert not ToolEvent.objects.exists() and not Event.objects.exists()


def test_completion_validates_the_order_against_the_outcome(runtime):
    call_id, _ = runtime.start()
    response = runtime.complete(call_id, outcome="order", order=None)
    assert response.status_code == 400 and "order" in response.json()["details"]["fieldErrors"]
    response = runtime.complete(call_id, outcome="info", order=completion()["order"])
    assert response.status_code == 400
    assert runtime.call(call_id).status == "in_progress" and not Event.objects.exists()


def test_messages_are_stored_and_announced(runtime, org):
    member = team_member_create(org=org, name="Maria Lopez")
    call_id, _ = runtime.start()
    runtime.complete(call_id, outcome="message", messages=[
        {"message": "Please call back about Saturday's catering.", "for_team_member_id": str(member.id)},
    ])
    message = Message.objects.get()
    [taken] = events(org, "call.message_taken")
    call = runtime.call(call_id)
    assert taken.data == {
        "call_id": str(call.id), "location_id": None, "contact_id": str(call.contact_id),
        "for_team_member_id": str(member.id), "for_team_member_name": "Maria Lopez",
        "message": message.message, "caller_name": "Jordan Miles", "callback_number": "+14155550123",
        "sequence": 3,
    }


def test_quality_check_verification_is_checked_against_the_transcript(runtime):
    call_id, _ = runtime.start()
    runtime.complete(call_id)
    checks = runtime.call(call_id).quality_checks
    assert [c["verification"] for c in checks] == ["verified", "verified", "unverified"]
    assert checks[1]["gap_type"] is None
    assert runtime.call(call_id).score == 67  # 2 of 3 judged checks passed


def test_recording_upload_accepts_multipart(runtime):
    from django.core.files.uploadedfile import SimpleUploadedFile

    call_id, _ = runtime.start()
    upload = SimpleUploadedFile("call.wav", b"RIFF-fake", content_type="audio/wav")
    response = runtime.client.post(f"{runtime.prefix}/calls/{call_id}/recording",
                                   {"file": upload, "duration_seconds": "7"}, format="multipart")
    assert response.status_code == 201
    recording = Recording.objects.get()
    assert recording.duration_seconds == 7 and recording.file.read() == b"RIFF-fake"


def test_recording_upload_refuses_non_audio_and_over_limit_bodies(runtime, settings):
    call_id, _ = runtime.start()
    assert runtime.upload(call_id, content_type="text/plain").status_code == 400
    assert runtime.upload(call_id, audio=b"").status_code == 400
    big = b"\0" * (settings.MAX_REQUEST_BODY_BYTES + 1)
    response = runtime.upload(call_id, audio=big)
    assert response.status_code == 413 and response.json() == {"error": "payload_too_large"}
    assert not Recording.objects.exists() and not Event.objects.exists()


def test_an_org_without_call_recording_stores_nothing_and_emits_nothing(runtime, org):
    org.call_recording_enabled = False
    org.save()
    call_id, _ = runtime.start()
    response = runtime.upload(call_id)
    assert response.status_code == 409 and response.json()["error"] == "recording_disabled"
    assert not Recording.objects.exists() and not Event.objects.exists()


def test_knowledge_is_served_fresh_with_an_etag_and_304(runtime, org):
    fact = fact_create(org=org, label="Opening hours", content="11 to 10")
    first = runtime.knowledge()
    assert first.status_code == 200
    etag = first["ETag"]
    body = first.json()["data"]
    assert [f["content"] for f in body["facts"]] == ["11 to 10"]
    assert set(body) >= {"facts", "locations", "team_members", "escalation_rules", "calendars", "organization"}
    unchanged = runtime.knowledge(etag)
    assert unchanged.status_code == 304 and unchanged["ETag"] == etag
    from knowledge.services import fact_update

    fact_update(fact=fact, content="Noon to midnight")
    changed = runtime.knowledge(etag)
    assert changed.status_code == 200 and changed["ETag"] != etag
    assert [f["content"] for f in changed.json()["data"]["facts"]] == ["Noon to midnight"]


def test_a_fact_changed_through_v1_is_served_on_the_very_next_read(runtime, org, api):
    created = api.post("/v1/facts", {"label": "Parking", "content": "Free after 6"}, format="json")
    etag = runtime.knowledge()["ETag"]
    api.patch(f"/v1/facts/{created.json()['data']['id']}", {"content": "Free all day"}, format="json")
    response = runtime.knowledge(etag)
    assert response.status_code == 200
    assert [f["content"] for f in response.json()["data"]["facts"]] == ["Free all day"]


def test_a_new_escalation_rule_changes_the_knowledge_etag(runtime, org):
    etag = runtime.knowledge()["ETag"]
    escalation_rule_create(org=org, name="Urgent", destination_type="phone", destination_phone="+14155550100",
                           keywords=["manager"])
    response = runtime.knowledge(etag)
    assert response.status_code == 200
    assert [r["name"] for r in response.json()["data"]["escalation_rules"]] == ["Urgent"]


def test_the_runtime_token_of_the_path_org_only(org, other_org):
    """The token is the service's; the org comes from the path, so one token serves every org."""
    Runtime(org).start("rt-a")
    Runtime(other_org).start("rt-b")
    assert set(Call.objects.values_list("organization_id", flat=True)) == {org.id, other_org.id}


def _race(fn, n=4):
    return run_together(*[fn] * n)


@pytest.mark.django_db(transaction=True)
def test_concurrent_retries_of_start_completion_event_and_upload_each_happen_once(org):
    starts = _race(lambda: Runtime(org).start("rt-race")[1].status_code)
    assert sorted(starts) == [200, 200, 200, 201]
    events_ = _race(lambda: Runtime(org).event("rt-race", type="callback_requested", label="Requested a callback",
                                               event_id="ev-race", data={"reason": "Call me"}).status_code)
    assert sorted(events_) == [200, 200, 200, 201]
    completes = _race(lambda: Runtime(org).complete("rt-race").status_code)
    uploads = _race(lambda: Runtime(org).upload("rt-race").status_code)
    assert completes == [200] * 4 and sorted(uploads) == [200, 200, 200, 201]
    assert Call.objects.count() == 1 and Order.objects.count() == 1 and Recording.objects.count() == 1
    assert CallbackRequest.objects.count() == 1
    assert event_types(org) == [
        "call.callback_requested", "call.ended", "call.recording_ready", "contact.created"
    ]
