import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings as django_settings
from rest_framework.test import APIClient

from calls.models import Call
from tests.calls.event_schemas import assert_valid_envelope
from webhooks.models import Event

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    """Recordings go to a per-test directory, never to var/media."""
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": tmp_path}},
    }


class Runtime:
    """The agent runtime's side of the internal API, for one org, through the real views and token check."""

    def __init__(self, org, token=None):
        self.org = org
        self.client = APIClient()
        self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {token or django_settings.AGENT_RUNTIME_TOKEN}")
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


def events(org, type=None) -> list[Event]:
    qs = Event.objects.filter(organization=org).order_by("created_at", "id")
    if type:
        qs = qs.filter(type=type)
    return list(qs)


def event_types(org) -> list[str]:
    """The org's event types, sorted: events of one transaction may share a timestamp, so no order is implied."""
    return sorted(e.type for e in events(org))


def assert_valid_event(event: Event) -> None:
    assert_valid_envelope(event)


@pytest.fixture
def runtime(org):
    return Runtime(org)


@pytest.fixture
def other_runtime(other_org):
    return Runtime(other_org)
