"""What configures the agent runtime on the calls side: escalation rules and bookable calendars. Each write bumps
the org's knowledge version, so the runtime's knowledge ETag changes and it reads them fresh."""

from functools import cache
from zoneinfo import available_timezones

from django.db import IntegrityError, transaction
from django.utils import timezone

from orgs.models import Organization, TeamMember
from orgs.phones import normalize_phone
from orgs.services import knowledge_version_bump, resolve_location
from orgs.tenancy import get_for_org
from voiceagent.errors import Conflict, ValidationFailed
from voiceagent.validation import check_lengths

from .. import availability
from ..models import Booking, Calendar, EscalationRule

RULE_FIELDS = ("name", "description", "keywords", "enabled", "destination_type", "destination_team_member",
               "destination_phone", "location")
RULE_CAPS = {"name": 200, "description": 5000}
MAX_KEYWORDS, MAX_KEYWORD_LENGTH = 50, 100


def _clean_rule(org: Organization, rule: EscalationRule, changes: dict) -> dict:
    """`changes` checked against the rule they produce: the destination fields are required iff their type says
    so, keywords are 0..50 distinct (case-insensitively) strings of 1..100, and a rule needs keywords or a
    description. The team member and the location resolve through this org (another org's: 404)."""
    unknown = sorted(set(changes) - set(RULE_FIELDS))
    if unknown:
        raise ValidationFailed(form_errors=[f"Unrecognized key(s): {', '.join(unknown)}"])
    changes = dict(changes)
    for field in ("name", "description"):
        if isinstance(changes.get(field), str):
            changes[field] = changes[field].strip()
    if "name" in changes and not changes["name"]:
        raise ValidationFailed(field_errors={"name": ["This field may not be blank."]})
    check_lengths(changes, RULE_CAPS)
    if "keywords" in changes:
        changes["keywords"] = _clean_keywords(changes["keywords"])
    if changes.get("destination_team_member") is not None:
        # Locked (FOR NO KEY UPDATE): a concurrent delete of this member waits for this transaction and then sees
        # the rule (409); one that came first leaves no row here (404). Never a rule pointing at a deleted member.
        changes["destination_team_member"] = get_for_org(
            TeamMember.objects.select_for_update(no_key=True), org,
            getattr(changes["destination_team_member"], "pk", changes["destination_team_member"]),
        )
    if changes.get("location") is not None:
        changes["location"] = resolve_location(org, changes["location"])
    if changes.get("destination_phone") is not None:
        changes["destination_phone"] = normalize_phone(changes["destination_phone"], region=org.default_phone_region,
                                                       field="destination_phone")
    after = {field: changes.get(field, getattr(rule, field)) for field in RULE_FIELDS}
    kind = after["destination_type"]
    errors = {}
    if kind not in EscalationRule.DestinationType.values:
        errors["destination_type"] = ["Must be team_member or phone."]
    elif kind == EscalationRule.DestinationType.TEAM_MEMBER:
        if after["destination_team_member"] is None:
            errors["destination_team_member_id"] = ["Required when destination_type is team_member."]
        if after["destination_phone"] is not None:
            errors["destination_phone"] = ["Must be null when destination_type is team_member."]
    else:
        if after["destination_phone"] is None:
            errors["destination_phone"] = ["Required when destination_type is phone."]
        if after["destination_team_member"] is not None:
            errors["destination_team_member_id"] = ["Must be null when destination_type is phone."]
    if errors:
        raise ValidationFailed(field_errors=errors)
    if not after["keywords"] and not after["description"]:
        raise ValidationFailed(form_errors=["A rule needs keywords or a description (what the runtime listens for)."])
    return changes


def _clean_keywords(keywords) -> list[str]:
    keywords = [keyword.strip() for keyword in keywords]
    problems = []
    if len(keywords) > MAX_KEYWORDS:
        problems.append(f"Ensure this field has no more than {MAX_KEYWORDS} elements.")
    if any(not 1 <= len(keyword) <= MAX_KEYWORD_LENGTH for keyword in keywords):
        problems.append(f"Each keyword must be 1 to {MAX_KEYWORD_LENGTH} characters.")
    if len({keyword.casefold() for keyword in keywords}) != len(keywords):
        problems.append("Keywords must not repeat (case-insensitively).")
    if problems:
        raise ValidationFailed(field_errors={"keywords": problems})
    return keywords


def _save_rule(rule: EscalationRule, fields: list[str] | None = None) -> EscalationRule:
    try:
        with transaction.atomic():
            if fields is None:
                rule.save(force_insert=True)
            else:
                rule.save(update_fields=[*fields, "updated_at"])
    except IntegrityError:
        raise Conflict("name", "An escalation rule with this name already exists.") from None
    knowledge_version_bump(org=rule.organization)
    return rule


@transaction.atomic
def escalation_rule_create(
    *,
    org: Organization,
    name: str,
    destination_type: str,
    destination_team_member=None,
    destination_phone: str | None = None,
    keywords: list[str] | None = None,
    description: str = "",
    enabled: bool = True,
    location=None,
) -> EscalationRule:
    """Creates an escalation rule and bumps the org's knowledge version (the runtime's next read serves it).
    `destination_team_member` and `location`: instances or ids of this org. Duplicate name: 409."""
    rule = EscalationRule(organization=org, destination_type=destination_type)
    values = _clean_rule(org, rule, {
        "name": name, "description": description or "", "keywords": list(keywords or []), "enabled": enabled,
        "destination_type": destination_type, "destination_team_member": destination_team_member,
        "destination_phone": destination_phone, "location": location,
    })
    for field, value in values.items():
        setattr(rule, field, value)
    return _save_rule(rule)


@transaction.atomic
def escalation_rule_update(*, rule: EscalationRule, **changes) -> EscalationRule:
    """Changes any of the rule's fields (enabling and disabling included); bumps the knowledge version."""
    values = _clean_rule(rule.organization, rule, changes)
    for field, value in values.items():
        setattr(rule, field, value)
    return _save_rule(rule, list(values)) if values else rule


@transaction.atomic
def escalation_rule_delete(*, rule: EscalationRule) -> None:
    """Deletes a rule; its past escalations stay, with its name. Bumps the knowledge version."""
    org = rule.organization
    rule.delete()
    knowledge_version_bump(org=org)


CALENDAR_FIELDS = ("name", "location", "timezone", "slot_minutes", "weekly_hours")
MIN_SLOT_MINUTES, MAX_SLOT_MINUTES = 5, 480


def _clean_calendar(org: Organization, changes: dict) -> dict:
    unknown = sorted(set(changes) - set(CALENDAR_FIELDS))
    if unknown:
        raise ValidationFailed(form_errors=[f"Unrecognized key(s): {', '.join(unknown)}"])
    changes = dict(changes)
    errors = {}
    if "name" in changes:
        changes["name"] = (changes["name"] or "").strip()
        if not changes["name"]:
            errors["name"] = ["This field may not be blank."]
        elif len(changes["name"]) > 200:
            errors["name"] = ["Ensure this field has no more than 200 characters."]
    if "timezone" in changes and changes["timezone"] not in _timezones():
        errors["timezone"] = ["Enter a valid IANA time zone, e.g. America/New_York."]
    if "slot_minutes" in changes and not (
        isinstance(changes["slot_minutes"], int) and MIN_SLOT_MINUTES <= changes["slot_minutes"] <= MAX_SLOT_MINUTES
    ):
        errors["slot_minutes"] = [f"Ensure this value is between {MIN_SLOT_MINUTES} and {MAX_SLOT_MINUTES}."]
    if "weekly_hours" in changes and (problems := availability.weekly_hours_problems(changes["weekly_hours"])):
        errors["weekly_hours"] = problems
    if errors:
        raise ValidationFailed(field_errors=errors)
    if changes.get("location") is not None:
        changes["location"] = resolve_location(org, changes["location"])
    return changes


@cache
def _timezones() -> frozenset[str]:
    return frozenset(available_timezones())  # scans tzdata on disk; once per process is enough


def _save_calendar(calendar: Calendar, fields: list[str] | None = None) -> Calendar:
    try:
        with transaction.atomic():
            if fields is None:
                calendar.save(force_insert=True)
            else:
                calendar.save(update_fields=[*fields, "updated_at"])
    except IntegrityError:
        raise Conflict("name", "A calendar with this name already exists.") from None
    knowledge_version_bump(org=calendar.organization)
    return calendar


@transaction.atomic
def calendar_create(*, org: Organization, name: str, timezone_name: str = "UTC", location=None,
                    slot_minutes: int = 30, weekly_hours: list[dict] | None = None) -> Calendar:
    """Creates a bookable calendar and bumps the org's knowledge version. Duplicate name: 409."""
    values = _clean_calendar(org, {"name": name, "timezone": timezone_name, "location": location,
                                   "slot_minutes": slot_minutes,
                                   "weekly_hours": [] if weekly_hours is None else weekly_hours})
    return _save_calendar(Calendar(organization=org, **values))


@transaction.atomic
def calendar_update(*, calendar: Calendar, **changes) -> Calendar:
    """Changes any of name, location, timezone, slot_minutes, weekly_hours (existing bookings stay)."""
    if "timezone_name" in changes:
        changes["timezone"] = changes.pop("timezone_name")
    values = _clean_calendar(calendar.organization, changes)
    for field, value in values.items():
        setattr(calendar, field, value)
    return _save_calendar(calendar, list(values)) if values else calendar


@transaction.atomic
def calendar_delete(*, calendar: Calendar) -> None:
    """Deletes a calendar without future confirmed bookings (else 409 `conflict`, `details.field` = `bookings`);
    its past and canceled bookings stay, their calendar null."""
    locked = Calendar.objects.select_for_update().get(pk=calendar.pk)  # no booking slips in meanwhile
    if locked.bookings.filter(status=Booking.Status.CONFIRMED, end_at__gt=timezone.now()).exists():
        raise Conflict("bookings", "This calendar has upcoming confirmed bookings: cancel them first.")
    org = calendar.organization
    locked.delete()
    knowledge_version_bump(org=org)
