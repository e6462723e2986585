"""Calls for the overview, calls and inbox page tests.

`simulate` drives realistic calls through the real agent runtime API (devtools.simulation), exactly as
`manage.py simulate_calls` does; `bulk_calls` writes many plain rows fast, for query-count tests.
"""

import json
import uuid
from datetime import timedelta
from io import StringIO

from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from calls.models import Call, CallbackRequest, Escalation, Message, Order
from knowledge.models import EscalationRule


def simulate(org, scenario: str, count: int = 1, seed: int = 1) -> list[Call]:
    """Plays `count` calls of `scenario` through the runtime API; returns the calls, oldest first."""
    out = StringIO()
    call_command("simulate_calls", "--org", str(org.id), "--scenario", scenario, "--count", str(count),
                 "--seed", str(seed), stdout=out)
    ids = [json.loads(line)["call_id"] for line in out.getvalue().splitlines() if line.strip()]
    return list(Call.objects.filter(pk__in=ids).order_by("started_at"))


def bulk_calls(org, n: int, *, start=None) -> list[Call]:
    """`n` completed calls over the last days, every third with an order, a callback, a message and an
    escalation, every fifth unscorable. Plain rows (no events): for counting queries, not for behaviour."""
    now = start or timezone.now()
    rule, _ = EscalationRule.objects.get_or_create(
        organization=org, name="Complaint", defaults={"destination_type": "phone", "destination_phone": "+14155550000"}
    )
    calls = []
    outcomes = ["order", "info", "message", "callback", "booking", "escalation"]
    for i in range(n):
        unscorable = i % 5 == 4
        calls.append(Call(
            organization=org, runtime_call_id=f"bulk-{uuid.uuid4().hex}", status="completed",
            started_at=now - timedelta(hours=7 * i), ended_at=now - timedelta(hours=7 * i) + timedelta(seconds=60),
            duration_seconds=60, from_number=f"+1415555{i:04d}", disposition="completed",
            classification="robocall" if unscorable else "real_engagement", scorable=not unscorable,
            score=None if unscorable else 50 + i % 50, summary=f"Call {i}",
            outcome="spam" if unscorable else outcomes[i % len(outcomes)],
            transcript=[{"speaker": "agent", "text": "Hello", "offset_seconds": 0}],
        ))
    Call.objects.bulk_create(calls)
    for i, call in enumerate(calls):
        if i % 3:
            continue
        Order.objects.create(
            organization=org, call=call, call_order_number=Order.objects.for_org(org).count() + 1,
            profile_id=uuid.uuid4(), profile_name="Phone orders", items=[], subtotal_cents=1000, total_cents=1000,
            fulfillment_estimate_value=20, fulfillment_estimate_unit="minutes", expected_fulfillment_at=now,
            cancellation_window_value=5, cancellation_window_unit="minutes", cancellation_deadline_at=now,
            placed_at=call.started_at,
        )
        CallbackRequest.objects.create(organization=org, call=call, requested_window="asap", reason="Question",
                                       callback_number=call.from_number)
        Message.objects.create(organization=org, call=call, message="Please call back", caller_name="Sam")
        Escalation.objects.create(organization=org, call=call, rule=rule, rule_name=rule.name,
                                  destination_type="phone", destination_phone="+14155550000", triggered_by="keyword")
    return calls


def count_queries(client, url: str) -> int:
    """Queries of one request, after a warm-up request (the first one also saves the session's org)."""
    client.get(url)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, response.status_code
    return len(queries)
