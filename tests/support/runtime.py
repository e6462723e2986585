"""The agent runtime's side of the internal API, through the real views and token check: a client per
organization, and the bodies a runtime sends (a completion with an order, a transcript)."""

import uuid
from datetime import UTC, datetime, timedelta

from django.conf import settings
from rest_framework.test import APIClient

from calls.models import Call
from knowledge.models import CallField

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def runtime_client(token: str | None = None) -> APIClient:
    """A client of the internal API with the runtime's token (or `token`; "" sends no Authorization header)."""
    client = APIClient()
    token = settings.AGENT_RUNTIME_TOKEN if token is None else token
    if token:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


class Runtime:
    """The agent runtime of one org: starts, feeds, completes and records calls as the runtime does."""

    def __init__(self, org, token=None):
        self.org = org
        self.client = runtime_client(token or None)
        self.prefix = f"/internal/agent/v1/orgs/{org.id}"

    def start(self, call_id=None, *, started_at=T0, from_number="+14155550123", location_id=None, **extra):
        call_id = call_id or f"rt-{uuid.uuid4().hex}"
        body = {"call_id": call_id, "started_at": iso(started_at), "from_number": from_number,
                "location_id": str(location_id) if location_id else None, **extra}
        response = self.client.post(f"{self.prefix}/calls", body, format="json")
        return call_id, response

    def event(self, call_id, *, type="tool", label="", event_id=None, data=None, offset_seconds=None):
        body = {"event_id": event_id or uuid.uuid4().hex, "type": type, "label": label, "data": data or {},
                "offset_seconds": offset_seconds}
        return self.client.post(f"{self.prefix}/calls/{call_id}/events", body, format="json")

    def complete(self, call_id, **overrides):
        return self.client.post(f"{self.prefix}/calls/{call_id}/complete", completion(**overrides), format="json")

    def upload(self, call_id, audio=b"RIFF....WAVEfmt fake-audio", content_type="audio/wav", duration=42):
        path = f"{self.prefix}/calls/{call_id}/recording"
        if duration is not None:
            path += f"?duration_seconds={duration}"
        return self.client.generic("PUT", path, audio, content_type=content_type)

    def knowledge(self, etag=None):
        headers = {"HTTP_IF_NONE_MATCH": etag} if etag else {}
        return self.client.get(f"{self.prefix}/knowledge", **headers)

    def call(self, call_id) -> Call:
        return Call.objects.get(organization=self.org, runtime_call_id=call_id)


TRANSCRIPT = [
    {"speaker": "agent", "text": "Thanks for calling Acme Pizza, how can I help?", "offset_seconds": 0},
    {"speaker": "caller", "text": "I'd like a large pepperoni pizza for pickup, please.", "offset_seconds": 3.5},
    {"speaker": "agent", "text": "Sure, that will be ready in about 25 minutes.", "offset_seconds": 8},
    {"speaker": "caller", "text": "Great, my name is Jordan Miles.", "offset_seconds": 12},
]


def order_body(**overrides) -> dict:
    body = {
        "profile_id": "6d1f4b52-6a43-4c1e-9d8e-2f3a1c0b7e11",
        "profile_name": "Phone orders",
        "items": [
            {
                "catalog_item_id": "0b6f0f7e-4c7b-4a52-9d55-0d3c2c5c9a01",
                "name": "Pepperoni pizza",
                "quantity": 2,
                "unit_price_cents": 1650,
                "modifiers": [
                    {"group_id": "5a0e8f8e-2f1e-4c8b-8f0e-9b7c6d5e4f31", "group_name": "Size",
                     "option_name": "16-inch", "price_cents": 450},
                    {"group_id": "5a0e8f8e-2f1e-4c8b-8f0e-9b7c6d5e4f32", "group_name": "Extra toppings",
                     "option_name": "Extra cheese", "price_cents": 200},
                ],
                "answers": [],
            },
            {
                "catalog_item_id": "0b6f0f7e-4c7b-4a52-9d55-0d3c2c5c9a02",
                "name": "Tiramisu",
                "quantity": 1,
                "unit_price_cents": 800,
                "answers": [{"question_id": "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f",
                             "prompt": "Any allergies?", "answer": "No"}],
            },
        ],
        "order_answers": [{"question_id": "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e60",
                           "prompt": "Pickup or delivery?", "answer": "Pickup"}],
        "fulfillment_estimate_value": 25,
        "fulfillment_estimate_unit": "minutes",
        "fulfillment_estimate_label": "Pickup in about 25 minutes",
        "cancellation_allowed": True,
        "cancellation_window_value": 10,
        "cancellation_window_unit": "minutes",
    }
    body.update(overrides)
    return body


def completion(**overrides) -> dict:
    body = {
        "ended_at": iso(T0 + timedelta(seconds=95)),
        "classification": "real_engagement",
        "disposition": "completed",
        "summary": "Jordan ordered two pepperoni pizzas and a tiramisu for pickup.",
        "outcome": "order",
        "outcome_tags": ["order", "pickup"],
        "transcript": TRANSCRIPT,
        "quality_checks": [
            {"name": "Gave a ready time", "verdict": "pass", "evidence": ["ready in about 25 minutes"],
             "gap_type": None},
            {"name": "Captured the name", "verdict": "pass", "evidence": ["my name is Jordan Miles"]},
            {"name": "Offered upsell", "verdict": "fail", "evidence": ["this was never said"],
             "gap_type": "missed_upsell"},
        ],
        "caller": {"name": "Jordan Miles", "email": "jordan@example.com"},
        "order": order_body(),
    }
    body.update(overrides)
    if body["outcome"] != "order" and "order" not in overrides:
        body["order"] = None
    return body


def place_call(runtime, *, started_at=T0, from_number="+14155550123", location=None, recording=True, **overrides):
    """A finished call with everything a call can hold (order, message, unanswered question, quality checks, a
    number call field `party_size` with its quote when the org has one, a recording); returns the Call row."""
    call_id, response = runtime.start(started_at=started_at, from_number=from_number,
                                      location_id=location.pk if location else None)
    assert response.status_code == 201, response.content
    body = {
        "ended_at": iso(started_at + timedelta(seconds=95)),
        "messages": [{"message": "Jordan wants to know if the patio is open", "caller_name": "Jordan Miles"}],
        "unanswered_questions": ["Is the patio heated?"],
        "fields": ({"party_size": {"value": 4, "evidence": "we are four people"}}
                   if CallField.objects.filter(organization=runtime.org, name="party_size").exists() else {}),
        "transcript": [*TRANSCRIPT, {"speaker": "caller", "text": "And we are four people.", "offset_seconds": 20}],
        **overrides,
    }
    response = runtime.complete(call_id, **body)
    assert response.status_code in (200, 201), response.content
    if recording:
        assert runtime.upload(call_id).status_code == 201
    return runtime.call(call_id)
