"""Example `data` of the alert events for test deliveries (webhooks.catalog.register_example): realistic values as
delivered (strings for ids and times), nothing written."""

import uuid
from datetime import timedelta

from django.utils import timezone

from core.links import alert_url
from core.timefmt import iso_ms


def _alert(org, *, resolved: bool) -> dict:
    now = timezone.now()
    alert_id = uuid.uuid4()
    return {
        "alert_id": str(alert_id), "rule_id": str(uuid.uuid4()), "rule_name": "Few calls on the main line",
        "location_id": None, "metric": "calls", "comparator": "lt", "value": 2.0, "threshold": 10.0,
        "window_minutes": 60, "triggered_at": iso_ms(now - timedelta(hours=1)),
        "resolved_at": iso_ms(now) if resolved else None, "alert_url": alert_url(alert_id),
    }


def _line_silent(org) -> dict:
    return {"alert_id": str(uuid.uuid4()), "rule_id": str(uuid.uuid4()), "location_id": str(uuid.uuid4()),
            "expected_calls": 6.5, "window_minutes": 60, "silent_since": iso_ms(timezone.now() - timedelta(hours=1))}


BUILDERS = {
    "alert.triggered": lambda org: _alert(org, resolved=False),
    "alert.resolved": lambda org: _alert(org, resolved=True),
    "location.line_silent": _line_silent,
}
