"""Example `data` of the alert events for test deliveries (webhooks.catalog.register_example): realistic values,
nothing written."""

import uuid
from datetime import timedelta

from django.utils import timezone

from core.links import alert_url


def _alert(org, *, resolved: bool) -> dict:
    now = timezone.now()
    alert_id = uuid.uuid4()
    return {
        "alert_id": alert_id, "rule_id": uuid.uuid4(), "rule_name": "Few calls on the main line", "location_id": None,
        "metric": "calls", "comparator": "lt", "value": 2.0, "threshold": 10.0, "window_minutes": 60,
        "triggered_at": now - timedelta(hours=1), "resolved_at": now if resolved else None,
        "alert_url": alert_url(alert_id),
    }


def _line_silent(org) -> dict:
    return {"alert_id": uuid.uuid4(), "rule_id": uuid.uuid4(), "location_id": uuid.uuid4(), "expected_calls": 6.5,
            "window_minutes": 60, "silent_since": timezone.now() - timedelta(hours=1)}


BUILDERS = {
    "alert.triggered": lambda org: _alert(org, resolved=False),
    "alert.resolved": lambda org: _alert(org, resolved=True),
    "location.line_silent": _line_silent,
}
