"""What the meeting tests send and read: a valid drafted outcome, the ingestion body and its POST, and the
status link's parts."""

import copy
import json
from urllib.parse import parse_qs, urlsplit

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


def post_meeting(client, org, body):
    return client.post(f"/internal/agent/v1/orgs/{org.pk}/meetings", data=json.dumps(body),
                       content_type="application/json")


def token_of(status_url: str) -> str:
    return parse_qs(urlsplit(status_url).query)["token"][0]


def status_path(status_url: str) -> str:
    parts = urlsplit(status_url)
    return f"{parts.path}?{parts.query}"


def approved_events(org):
    return list(Event.objects.for_org(org).filter(type="meeting.outcome_approved"))
