"""Test deliveries that check the receiver: one genuine event and two forgeries, and a verdict on what it did.

`POST /v1/webhook-subscriptions/{id}/test` sends, synchronously and through the same pinned, SSRF-checked
transport as every delivery, an example of the asked type signed with the subscription's secret, then the same
body under a fresh `webhook-id` with a signature made with another key, then again signed correctly but with a
timestamp 10 minutes old (Standard Webhooks receivers refuse anything older than 5 minutes). None of the three is
an Event, a Delivery or an attempt: nothing is retried, logged or counted toward the subscription's health.

A test holds a web worker, so no receiver may keep it long and no tenant may take many (docs/webhooks.md#test-
deliveries): the three POSTs share WEBHOOK_TEST_BUDGET_SECONDS (5 s) in all, sent from a thread the request waits
for no longer than that, and a test needs a place in two semaphores every process shares through Redis: its
organization's (1 test at a time, fleet-wide) and its node's (one of the node's web workers in four, at least 1,
keyed by NODE_ID), the node's with the fair share exports have (core/csvexport.py). Without a place, nothing is
sent and the caller answers 429 with Retry-After.
"""

import math
import threading
import time
import uuid
from dataclasses import asdict, dataclass

from django.conf import settings
from django.utils import timezone

from audit import services as audit
from core import counters
from core.csvexport import busy_scope

from . import catalog, crypto
from .delivery import build_headers
from .models import Subscription
from .services import envelope_bytes
from .ssrf import masked_url
from .transport import Outcome, post

STALE_SECONDS = 600
TESTS_PER_MINUTE = 10
TESTS_PER_ORG_AT_ONCE = 1
# A place is held at most this long past the budget: the sending thread gives it back as soon as it ends, and a
# process killed mid-test frees it when it expires.
SLOT_GRACE_SECONDS = 5.0
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


def budget_seconds() -> float:
    return min(5.0, float(settings.WEBHOOK_TEST_BUDGET_SECONDS))


def tests_at_once() -> int:
    """How many tests this node may run at once: one of its web workers in four, at least 1."""
    return max(1, int(settings.WEB_WORKERS) // 4)


class TestsBusy(Exception):
    """No place for a test now; `wait` is the whole seconds after which one may be free; `scope` as ExportsBusy's
    ("organization", "all" or "share")."""

    def __init__(self, wait: int, scope: str):
        super().__init__(f"{scope} tests at once")
        self.wait, self.scope = wait, scope


def _slots(subscription: Subscription) -> list[tuple[str, int]]:
    """The organization's semaphore (fleet-wide), then this node's (a quarter of its own web workers)."""
    return [(f"webhook-tests:fleet:org:{subscription.organization_id}", TESTS_PER_ORG_AT_ONCE),
            (f"webhook-tests:node:{settings.NODE_ID}", tests_at_once())]


def _share(subscription: Subscription) -> counters.Share:
    """The node's fair share, as for exports: organizations that ran a test lately, fleet-wide."""
    return counters.Share("webhook-tests:fleet:recent", str(subscription.organization_id),
                          float(settings.PLACES_FAIR_SHARE_SECONDS))


def _take_places(subscription: Subscription) -> str:
    budget = budget_seconds()
    try:
        return counters.take_slots(_slots(subscription), ttl=budget + SLOT_GRACE_SECONDS, share=_share(subscription))
    except counters.SlotsBusy as busy:
        # The holder in the way ends within its budget (a test never runs longer): its expiry minus the grace.
        if busy.name is None:
            wait = busy.expires_in
        elif busy.fair_share:
            wait = min(busy.expires_in, float(settings.PLACES_FAIR_SHARE_SECONDS))
        else:
            wait = min(budget, busy.expires_in - SLOT_GRACE_SECONDS)
        raise TestsBusy(max(1, math.ceil(wait)), busy_scope(busy)) from None


def _test_id() -> str:
    return f"evt_test_{uuid.uuid4().hex}"


def _send(name: str, url: str, body: bytes, headers: dict, deadline: float) -> Check:
    left = deadline - time.monotonic()
    if left <= 0:
        return Check(name, None, 0, f"Skipped: the test's {budget_seconds():g} s budget ran out.", "")
    outcome: Outcome = post(url, body, headers, timeout=left)
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
    """Sends the three test messages in order and returns `{verdict, message, checks}`, within the test budget.
    Never raises for what the receiver does; when the genuine event gets no answer the forgeries are not sent
    (their checks say so). Raises TestsBusy, sending nothing, when the organization or everyone has every test
    place taken."""
    url, messages = _messages(subscription, event_type)
    budget = budget_seconds()
    holder = _take_places(subscription)
    deadline = time.monotonic() + budget
    checks: list[Check] = []
    done = threading.Event()

    def run():
        try:
            _send_all(url, messages, deadline, checks)
        finally:
            counters.release_slots([name for name, _ in _slots(subscription)], holder, share=_share(subscription))
            done.set()

    # A thread, so that even what the POSTs' own budgets cannot cut (a DNS lookup that hangs) never holds the
    # request past the budget; the thread keeps its places until it ends.
    threading.Thread(target=run, name="webhook-test", daemon=True).start()
    done.wait(budget + 0.2)
    checks = list(checks)
    names = [name for name, _, _ in messages]
    for name in names[len(checks):]:
        reason = (f"Timeout: no answer within the test's {budget:g} s budget" if not checks
                  else f"Skipped: the test's {budget:g} s budget ran out.")
        checks.append(Check(name, None, 0, reason, ""))
    return _result(_verdict_of(checks), checks, subscription, event_type)


def _messages(subscription: Subscription, event_type: str) -> tuple[str, list[tuple[str, bytes, dict]]]:
    """The URL and the three (name, body, headers) to send: read here, in the request, so the sending thread
    needs no database."""
    secret = subscription.secret
    now = int(time.time())
    event_id = _test_id()
    data = catalog.example_data(event_type, subscription.organization)
    body = envelope_bytes(event_id=event_id, type=event_type, created_at=_now_ms(), data=data)
    bad = build_headers(event_id=_test_id(), body=body, secrets_=[crypto.generate_secret()], timestamp=now)
    stale = build_headers(event_id=_test_id(), body=body, secrets_=[secret], timestamp=now - STALE_SECONDS)
    return subscription.url, [
        ("valid", body, build_headers(event_id=event_id, body=body, secrets_=[secret])),
        ("bad_signature", body, bad),
        ("stale_timestamp", body, stale),
    ]


def _send_all(url: str, messages, deadline: float, checks: list[Check]) -> None:
    """Appends each message's check as it completes; after a genuine event with no answer, the forgeries are
    skipped."""
    for name, body, headers in messages:
        if checks and checks[0].status_code is None:
            checks.append(Check(name, None, 0, "Skipped: the genuine event got no answer.", ""))
            continue
        checks.append(_send(name, url, body, headers, deadline))


def _verdict_of(checks: list[Check]) -> str:
    valid, forgeries = checks[0], checks[1:]
    unsent = any(c.status_code is None and (c.error or "").startswith("Skipped: the test's") for c in forgeries)
    if valid.status_code is not None and unsent and not any(_is_2xx(c) for c in forgeries):
        return UNREACHABLE  # a forgery never sent tells nothing: the signatures are unchecked
    return verdict(valid, forgeries)


def _result(outcome: str, checks: list[Check], subscription: Subscription, event_type: str) -> dict:
    # Nothing changes in the database: the entry is written on its own.
    audit.record_alone(org=subscription.organization, action="webhook_subscription.tested", target=subscription,
                       target_label=masked_url(subscription.url), changes={"event_type": [None, event_type],
                                                               "verdict": [None, outcome]})
    return {"verdict": outcome, "message": MESSAGES[outcome], "checks": [asdict(check) for check in checks]}


def _now_ms():
    now = timezone.now()
    return now.replace(microsecond=now.microsecond // 1000 * 1000)
