"""Builders for the meetings tests: a valid drafted outcome, the runtime's client, and outcomes in each stage."""

import copy
import json
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from meetings.services import meeting_ingest, outcome_approve, outcome_dispatch
from tests.factories import MembershipFactory, OrganizationFactory
from tests.support.celery_worker import celery_worker_factory  # noqa: F401 - fixture re-export
from tests.webhooks.helpers import make_subscription
from webhooks.models import Event

VALID_OUTCOME = {
    "summary": "We reviewed the checkout failures. The team agreed to make the payment handler order-independent.",
    "tickets": [
        {
            "title": "Make the payment webhook handler order-independent",
            "description": "Store early payment events and apply them when the order exists.",
            "acceptance_criteria": ["Unknown orders get 2xx", "Pending events are applied on order creation"],
            "file_refs": [{"repo": "shop-backend", "path": "payments/webhooks.py"}],
            "confidence": 0.85,
            "assumptions": ["Events carry the order id."],
            "provenance": "Discussed at 04:10 by Priya.",
        }
    ],
    "decisions": [{"decision": "Store, do not reject, early events.", "context": "Rejections caused retries."}],
    "open_questions": [{"question": "How long to keep pending events?", "context": ""}],
    "action_items": [
        {"who": "Sam", "what": "Write the migration.", "due": None},
        {"who": "Lee", "what": "Confirm the alert threshold.", "due": "2026-12-04"},
    ],
    "schema_version": 1,
}


def valid_outcome(**changes) -> dict:
    outcome = copy.deepcopy(VALID_OUTCOME)
    outcome.update(changes)
    return outcome


def ingest_body(runtime_meeting_id="rt-meeting-1", **changes) -> dict:
    body = {
        "runtime_meeting_id": runtime_meeting_id,
        "title": "Checkout reliability sync",
        "started_at": "2026-11-20T15:00:00.000Z",
        "ended_at": "2026-11-20T15:45:00Z",
        "outcome": valid_outcome(),
    }
    body.update(changes)
    return body


def runtime_client(token: str | None = None) -> APIClient:
    client = APIClient()
    token = settings.AGENT_RUNTIME_TOKEN if token is None else token
    if token:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def post_meeting(client, org, body):
    return client.post(f"/internal/agent/v1/orgs/{org.pk}/meetings", data=json.dumps(body),
                       content_type="application/json")


def token_of(status_url: str) -> str:
    return parse_qs(urlsplit(status_url).query)["token"][0]


def status_path(status_url: str) -> str:
    parts = urlsplit(status_url)
    return f"{parts.path}?{parts.query}"


def events(org, type_="meeting.outcome_approved"):
    return list(Event.objects.for_org(org).filter(type=type_))


@pytest.fixture
def meetings_org(db):
    return OrganizationFactory(name="Meetings Co", meetings_enabled=True)


@pytest.fixture
def meetings_admin(meetings_org):
    return MembershipFactory(organization=meetings_org, role="admin").user


@pytest.fixture
def meetings_member(meetings_org):
    return MembershipFactory(organization=meetings_org, role="member").user


@pytest.fixture
def subscription(meetings_org):
    return make_subscription(meetings_org, events=("meeting.outcome_approved",))


@pytest.fixture
def draft(meetings_org):
    """A drafted outcome (ingested through the service)."""
    _, outcome, _ = meeting_ingest(
        org=meetings_org, runtime_meeting_id="rt-draft", title="Checkout reliability sync",
        started_at=datetime(2026, 11, 20, 15, tzinfo=UTC), outcome=valid_outcome(),
    )
    return outcome


@pytest.fixture
def approved(draft, meetings_admin):
    return outcome_approve(outcome=draft, by=meetings_admin)


@pytest.fixture
def dispatched(approved, meetings_admin, subscription):
    """(dispatch, status_url) of a freshly dispatched outcome; the URL comes from the emitted event."""
    dispatch = outcome_dispatch(outcome=approved, by=meetings_admin)
    event = Event.objects.get(pk=dispatch.event_id)
    return dispatch, event.data["status_url"]
