"""Writes of the alerts app: alert rules (create, update, delete) and acknowledging an alert; the evaluation's own
writes (opening and resolving alerts) are alerts.evaluation's. Keyword-only; one transaction each."""

import math

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from audit import services as audit
from core.errors import Conflict, ValidationFailed
from orgs import quotas
from orgs.scopes import audited_location_ids, clean_location_ids
from orgs.tenancy import check_writable

from .models import Alert, AlertRule, Channel, Comparator, Metric

__all__ = ["alert_rule_create", "alert_rule_update", "alert_rule_delete", "alert_acknowledge"]

MIN_WINDOW, MAX_WINDOW = 15, 1440
MAX_COOLDOWN = 7 * 1440
MAX_MIN_CALLS = 1_000_000
MAX_THRESHOLD = 1e9
MAX_NAME = 200
# The rates are fractions (0..1): a threshold above 1 could never be crossed upwards.
RATES = {Metric.UNANSWERED_QUESTION_RATE, Metric.WEBHOOK_FAILURE_RATE}
FIELDS = ("name", "metric", "location_ids", "comparator", "threshold", "window_minutes", "min_calls",
          "cooldown_minutes", "channels", "only_during_open_hours", "enabled")
DEFAULTS = {"location_ids": None, "min_calls": 1, "cooldown_minutes": 60, "channels": [Channel.EMAIL.value],
            "only_during_open_hours": False, "enabled": True}
# line_silent's condition is fixed (no call came while `min_calls` were expected): its comparator and threshold are
# these, given or not.
LINE_SILENT_CONDITION = {"comparator": Comparator.LT.value, "threshold": 1.0}


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _clean(values: dict) -> dict:
    """Every field's problems at once (fieldErrors by name), else the values as stored. Locations are checked
    after, in the transaction (`clean_location_ids` locks them)."""
    errors: dict[str, list[str]] = {}
    name = values.get("name")
    if not isinstance(name, str) or not name.strip():
        errors["name"] = ["This field may not be blank."]
    elif len(name.strip()) > MAX_NAME:
        errors["name"] = [f"Ensure this field has no more than {MAX_NAME} characters."]
    else:
        values["name"] = name.strip()
    metric = values.get("metric")
    if metric not in Metric.values:
        errors["metric"] = [f"Unknown metric {metric!r}. Choose one of: {', '.join(Metric.values)}."]
    if metric == Metric.LINE_SILENT:
        for field, fixed in LINE_SILENT_CONDITION.items():
            if values.get(field) is None:
                values[field] = fixed
    comparator = values.get("comparator")
    if comparator is None:
        errors["comparator"] = ["This field is required."]
    elif comparator not in Comparator.values:
        errors["comparator"] = [f"Unknown comparator {comparator!r}. Choose one of: {', '.join(Comparator.values)}."]
    elif metric == Metric.LINE_SILENT and comparator != LINE_SILENT_CONDITION["comparator"]:
        errors["comparator"] = ["line_silent fires when no call came: its comparator is lt."]
    threshold = values.get("threshold")
    if threshold is None:
        errors["threshold"] = ["This field is required."]
    elif isinstance(threshold, bool) or not isinstance(threshold, int | float) or not math.isfinite(threshold) \
            or not 0 <= threshold <= MAX_THRESHOLD:
        errors["threshold"] = [f"Ensure this value is a number from 0 to {MAX_THRESHOLD:g}."]
    elif metric in RATES and threshold > 1:
        errors["threshold"] = ["A rate is a fraction: ensure this value is from 0 to 1."]
    elif metric == Metric.LINE_SILENT and threshold != LINE_SILENT_CONDITION["threshold"]:
        errors["threshold"] = ["line_silent fires when no call came: its threshold is 1 (fewer than one call)."]
    else:
        values["threshold"] = float(threshold)
    window = values.get("window_minutes")
    if not _is_int(window) or not MIN_WINDOW <= window <= MAX_WINDOW:
        errors["window_minutes"] = [f"Ensure this value is a whole number of minutes from {MIN_WINDOW} to "
                                    f"{MAX_WINDOW}."]
    min_calls = values.get("min_calls")
    if not _is_int(min_calls) or not 0 <= min_calls <= MAX_MIN_CALLS:
        errors["min_calls"] = [f"Ensure this value is a whole number from 0 to {MAX_MIN_CALLS}."]
    elif metric == Metric.LINE_SILENT and min_calls < 1:
        errors["min_calls"] = ["line_silent needs at least 1 expected call to fire."]
    cooldown = values.get("cooldown_minutes")
    if not _is_int(cooldown) or not 0 <= cooldown <= MAX_COOLDOWN:
        errors["cooldown_minutes"] = [f"Ensure this value is a whole number of minutes from 0 to {MAX_COOLDOWN}."]
    channels = values.get("channels")
    if not isinstance(channels, list) or any(channel not in Channel.values for channel in channels):
        errors["channels"] = [f"Give a list of channels among: {', '.join(Channel.values)}."]
    elif len(set(channels)) != len(channels):
        errors["channels"] = ["Channels must not repeat."]
    for flag in ("only_during_open_hours", "enabled"):
        if not isinstance(values.get(flag), bool):
            errors[flag] = ["Must be a boolean."]
    if metric == Metric.WEBHOOK_FAILURE_RATE and values.get("location_ids") is not None:
        errors["location_ids"] = ["Webhook subscriptions are the organization's: webhook_failure_rate takes null."]
    if errors:
        raise ValidationFailed(field_errors=errors)
    return values


def _save(rule: AlertRule, *, update_fields=None) -> AlertRule:
    try:
        with transaction.atomic():
            rule.save(update_fields=update_fields)
    except IntegrityError:
        # The unique constraint decides (no check-then-insert).
        raise Conflict("name", "An alert rule with this name already exists.") from None
    return rule


def _audited(rule: AlertRule) -> dict:
    values = {field: getattr(rule, field) for field in FIELDS}
    values["location_ids"] = audited_location_ids(rule.location_ids)
    return values


def alert_rule_create(*, org, **values) -> AlertRule:
    """Creates a rule (`FIELDS`; `name`, `metric`, `comparator`, `threshold` and `window_minutes` required, but
    line_silent's comparator and threshold, which are fixed). Bad input: ValidationFailed naming the field
    (`location_ids`: a location of another organization, or outside the caller's scope, alike); a principal limited
    to locations creates rules of its locations only (ScopeForbidden); a duplicate name and the
    QUOTA_ALERT_RULES_PER_ORG-th rule: Conflict (`name`, `alert_rules`)."""
    unknown = set(values) - set(FIELDS)
    if unknown:
        raise ValidationFailed(form_errors=[f"Unrecognized key(s): {', '.join(sorted(unknown))}"])
    values = _clean({**DEFAULTS, **values})
    with transaction.atomic():
        values["location_ids"] = clean_location_ids(org=org, location_ids=values["location_ids"]) \
            if values["location_ids"] is not None else None
        rule = AlertRule(organization=org, **values)
        check_writable(org, rule)
        quotas.lock_organization(org)
        quotas.check_count(
            field="alert_rules", used=AlertRule.objects.filter(organization_id=org.pk).count(),
            limit=settings.QUOTA_ALERT_RULES_PER_ORG, what="alert rules", setting="QUOTA_ALERT_RULES_PER_ORG",
            free="Delete an alert rule to create another.",
        )
        _save(rule)
        audit.record(org=org, action="alert_rule.created", target=rule,
                     changes={field: [None, value] for field, value in _audited(rule).items()})
    return rule


def alert_rule_update(*, rule: AlertRule, **changes) -> AlertRule:
    """Changes any subset of `FIELDS`, checked against the rule they produce (as on create). The caller has
    scoped `rule` to its organization (and scope); the new locations must be within that scope too. Open alerts
    stay open and are judged by the rule as it is now."""
    org = rule.organization
    unknown = set(changes) - set(FIELDS)
    if unknown:
        raise ValidationFailed(form_errors=[f"Unrecognized key(s): {', '.join(sorted(unknown))}"])
    with transaction.atomic():
        locked = AlertRule.objects.select_for_update().get(pk=rule.pk)
        locked.organization = org
        check_writable(org, locked)
        before = _audited(locked)
        values = _clean({**{field: getattr(locked, field) for field in FIELDS}, **changes})
        if "location_ids" in changes and values["location_ids"] is not None:
            values["location_ids"] = clean_location_ids(org=org, location_ids=values["location_ids"])
        for field, value in values.items():
            setattr(locked, field, value)
        check_writable(org, locked)
        _save(locked, update_fields=[*FIELDS, "updated_at"])
        after = _audited(locked)
        diff = {field: [before[field], after[field]] for field in FIELDS if before[field] != after[field]}
        if diff:
            audit.record(org=org, action="alert_rule.updated", target=locked, changes=diff)
    return locked


@transaction.atomic
def alert_rule_delete(*, rule: AlertRule) -> None:
    """Deletes a rule; its alerts stay in the history (`rule_id` null), and an open one is resolved now, since
    nothing judges it any more."""
    org = rule.organization
    check_writable(org, rule)
    now = timezone.now()
    Alert.objects.filter(rule_id=rule.pk, resolved_at__isnull=True).update(resolved_at=now, updated_at=now)
    if AlertRule.objects.filter(pk=rule.pk).delete()[0]:
        audit.record(org=org, action="alert_rule.deleted", target=rule)


@transaction.atomic
def alert_acknowledge(*, alert: Alert, by: str) -> Alert:
    """Marks the alert acknowledged by `by` (a label: the key's name and prefix, a member's e-mail), once: a second
    acknowledgement changes nothing and answers the first. Open or resolved alike. The caller has scoped `alert`."""
    org = alert.organization
    check_writable(org, alert)
    locked = Alert.objects.select_for_update().get(pk=alert.pk)
    locked.organization = org
    if locked.acknowledged_at is None:
        locked.acknowledged_at = timezone.now()
        locked.acknowledged_by = by[:300]
        locked.save(update_fields=["acknowledged_at", "acknowledged_by", "updated_at"])
        audit.record(org=org, action="alert.acknowledged", target=locked,
                     changes={"acknowledged_by": [None, locked.acknowledged_by]})
    return locked


def refuse_delete_of_location_in_use(location) -> None:
    """Conflict (`details.field` = `alert_rules`, naming them) while alert rules name the location: deleting it would
    silently widen or empty what they watch. Registered with knowledge.services.delete_guard."""
    names = sorted(AlertRule.objects.filter(organization_id=location.organization_id,
                                            location_ids__contains=[location.pk]).values_list("name", flat=True))
    if names:
        raise Conflict("alert_rules", f"Alert rules watch this location: {', '.join(names)}. Delete them or change "
                       "their locations first.")
