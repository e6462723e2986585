"""Test deliveries that check the receiver: one genuine event and two forgeries, and a verdict on what it did.

`POST /v1/webhook-subscriptions/{id}/test` sends, synchronously and through the same pinned, SSRF-checked
transport as every delivery, an example of the asked type signed with the subscription's secret, then the same
body under a fresh `webhook-id` with a signature made with another key, then again signed correctly but with a
timestamp 10 minutes old (Standard Webhooks receivers refuse anything older than 5 minutes). None of the three is
an Event, a Delivery or an attempt: nothing is retried, logged or counted toward the subscription's health.
"""

import time
import uuid
from dataclasses import asdict, dataclass

from django.utils import timezone

from voiceagent import counters

from . import catalog, crypto
from .models import Subscription
from .sender import build_headers
from .services import envelope_bytes
from .transport import Outcome, post

STALE_SECONDS = 600
TESTS_PER_MINUTE = 10
EXCERPT_CHARS = 300

VERIFIES = "verifies_signatures"
ACCEPTS_FORGERIES = "accepts_invalid_signatures"
REJECTS_VALID = "rejects_valid_signature"
UNREACHABLE = "unreachable"

MESSAGES = {
    VERIFIES: "The receiver accepted the signed event and refused both forgeries.",
    ACCEPTS_FORGERIES: "The receiver answered 2xx to a forged event: it does not verify webhook-signature (or "
    "not webhook-timestamp). Anyone who knows its URL can send it events.",
    REJECTS_VALID: "The receiver refused a correctly signed event. Verify the signature over the raw request body "
    "bytes as received, not over JSON you parsed and serialized again, and check the secret (whsec_...).",
    UNREACHABLE: "The receiver could not be reached or did not answer with a status the verdict can use.",
}


@dataclass
class Check:
    name: str
    status_code: int | None
    duration_ms: int
    error: str | None
    response_excerpt: str


def take_test_slot(subscription: Subscription) -> int | None:
    """Counts one test of this subscription in a minute that opens at its first test (shared by every process
    through Redis). None when it may run; else the seconds until that minute ends, when it may."""
    count, wait = counters.hit_window(f"webhook-test:{subscription.pk}", seconds=60)
    return None if count <= TESTS_PER_MINUTE else wait


def _test_id() -> str:
    return f"evt_test_{uuid.uuid4().hex}"


def _send(name: str, url: str, body: bytes, headers: dict) -> Check:
    outcome: Outcome = post(url, body, headers)
    error = outcome.error if outcome.status_code is None or 300 <= outcome.status_code < 400 else None
    return Check(name, outcome.status_code, outcome.duration_ms, error or None, outcome.body[:EXCERPT_CHARS])


def _is_2xx(check: Check) -> bool:
    return check.status_code is not None and 200 <= check.status_code < 300


def verdict(valid: Check, forgeries: list[Check]) -> str:
    """A forgery that got 2xx condemns the receiver whatever else happened; then the genuine event decides: 2xx
    verifies, 4xx refused it, anything else (no answer, a redirect, 5xx) tells nothing about signatures."""
    if any(_is_2xx(check) for check in forgeries):
        return ACCEPTS_FORGERIES
    if _is_2xx(valid):
        return VERIFIES
    if valid.status_code is not None and 400 <= valid.status_code < 500:
        return REJECTS_VALID
    return UNREACHABLE


def send_test(*, subscription: Subscription, event_type: str = "call.ended") -> dict:
    """Sends the three test messages in order and returns `{verdict, message, checks}`. Never raises for what the
    receiver does; when the genuine event gets no answer the forgeries are not sent (their checks say so)."""
    secret = subscription.secret
    now = int(time.time())
    event_id = _test_id()
    data = catalog.example_data(event_type, subscription.organization)
    body = envelope_bytes(event_id=event_id, type=event_type, created_at=_now_ms(), data=data)
    valid = _send("valid", subscription.url, body, build_headers(event_id=event_id, body=body, secrets_=[secret]))
    if valid.status_code is None:
        skipped = [Check(name, None, 0, "Skipped: the genuine event got no answer.", "")
                   for name in ("bad_signature", "stale_timestamp")]
        return _result(UNREACHABLE, [valid, *skipped])
    forged_id = _test_id()
    bad = build_headers(event_id=forged_id, body=body, secrets_=[crypto.generate_secret()], timestamp=now)
    stale_id = _test_id()
    stale = build_headers(event_id=stale_id, body=body, secrets_=[secret], timestamp=now - STALE_SECONDS)
    forgeries = [
        _send("bad_signature", subscription.url, body, bad),
        _send("stale_timestamp", subscription.url, body, stale),
    ]
    return _result(verdict(valid, forgeries), [valid, *forgeries])


def _result(outcome: str, checks: list[Check]) -> dict:
    return {"verdict": outcome, "message": MESSAGES[outcome], "checks": [asdict(check) for check in checks]}


def _now_ms():
    now = timezone.now()
    return now.replace(microsecond=now.microsecond // 1000 * 1000)
