"""Reads of the alerts app, always through `for_org` (so a principal limited to locations sees its own)."""

from django.db.models import QuerySet

from orgs.tenancy import get_for_org

from .models import Alert, AlertRule

ALERT_STATUSES = ("open", "acknowledged", "resolved")


def alert_rule_list(*, org) -> QuerySet[AlertRule]:
    return AlertRule.objects.for_org(org)


def alert_rule_get(*, org, rule_id) -> AlertRule:
    return get_for_org(AlertRule, org, rule_id)


def alert_list(*, org, status: str | None = None, rule_id=None, location_id=None) -> QuerySet[Alert]:
    """The organization's alerts; `status` open (not resolved), acknowledged (open and acknowledged) or resolved."""
    rows = Alert.objects.for_org(org)
    if status == "open":
        rows = rows.filter(resolved_at__isnull=True)
    elif status == "acknowledged":
        rows = rows.filter(resolved_at__isnull=True, acknowledged_at__isnull=False)
    elif status == "resolved":
        rows = rows.filter(resolved_at__isnull=False)
    if rule_id is not None:
        rows = rows.filter(rule_id=rule_id)
    if location_id is not None:
        rows = rows.filter(location_id=location_id)
    return rows


def alert_get(*, org, alert_id) -> Alert:
    return get_for_org(Alert.objects.select_related("rule"), org, alert_id)
