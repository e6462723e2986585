"""Writes of what the agent runtime reads: locations, facts, team members, escalation rules and calendars. Each
service is one transaction and bumps the org's knowledge version in it, so the runtime's knowledge ETag changes on
the very next read after commit."""

from collections.abc import Callable
from functools import cache
from zoneinfo import available_timezones

from django.db import IntegrityError, transaction
from django.db.models import F, ProtectedError

from orgs.models import Membership, Organization
from orgs.phones import normalize_phone
from orgs.tenancy import get_for_org
from voiceagent.errors import Conflict, Forbidden, ValidationFailed
from voiceagent.validation import check_email, check_lengths, optional_text

from . import weekly_hours
from .models import Calendar, EscalationRule, Fact, Location, TeamMember

# --- The knowledge base: locations, facts, team members --------------------------------------------------------
#
# Every write below runs in one transaction that also bumps `Organization.knowledge_version` (an F() increment),
# so the agent runtime's ETag (orgs.selectors.knowledge_etag) changes on the very next read after commit.
# Unique names and labels are database constraints; an IntegrityError becomes Conflict(field), also under a race.

KNOWLEDGE_CAPS = {"name": 200, "label": 200, "address": 5000, "role": 200, "email": 254, "phone_number": 32,
                  "content": 10_000}


def knowledge_version_bump(*, org: Organization) -> None:
    """Marks the org's knowledge as changed. Call it inside the transaction of any write the runtime reads
    (facts, locations, team members; escalation rules in calls/), so the change and the new ETag commit together."""
    Organization.objects.filter(pk=org.pk).update(knowledge_version=F("knowledge_version") + 1)


def _require_text(values: dict, *fields: str) -> None:
    errors = {field: ["This field may not be blank."] for field in fields if field in values and not values[field]}
    if errors:
        raise ValidationFailed(field_errors=errors)


@cache
def _timezones() -> frozenset[str]:
    return frozenset(available_timezones())  # scans tzdata on disk; once per process is enough


def _check_timezone(name: str) -> None:
    if name not in _timezones():
        raise ValidationFailed(field_errors={"timezone": ["Enter a valid IANA time zone, e.g. America/New_York."]})


def _save(instance, *, conflict_field: str, update_fields: list[str] | None = None):
    """Saves in a savepoint, turning the unique constraint's IntegrityError into Conflict(conflict_field)."""
    try:
        with transaction.atomic():
            if update_fields is None:
                instance.save(force_insert=True)
            else:
                instance.save(update_fields=[*update_fields, "updated_at"])
    except IntegrityError:
        raise Conflict(conflict_field, f"{conflict_field} already exists.") from None
    return instance


def _apply(instance, changes: dict, allowed: tuple[str, ...]) -> list[str]:
    unknown = sorted(set(changes) - set(allowed))
    if unknown:
        raise ValidationFailed(form_errors=[f"Unrecognized key(s): {', '.join(unknown)}"])
    for field, value in changes.items():
        setattr(instance, field, value)
    return list(changes)


def _update(instance, changes: dict, *, clean, allowed: tuple[str, ...], conflict_field: str):
    """The one shape of the knowledge updates: `clean(org, changes)`, refuse unknown fields, set the rest, save
    only those (a unique clash is Conflict(conflict_field)) and bump the knowledge version if anything changed.
    The caller holds the transaction."""
    org = instance.organization
    fields = _apply(instance, clean(org, changes), allowed)
    if fields:
        _save(instance, conflict_field=conflict_field, update_fields=fields)
        knowledge_version_bump(org=org)
    return instance


def resolve_location(org: Organization, location):
    """A Location of `org` from an instance or an id; another org's or a missing one is NotFound (never linked).
    Locked (FOR NO KEY UPDATE) until the caller's transaction ends, so a concurrent `location_delete` either comes
    first (NotFound here) or waits and then unlinks what this transaction linked; never a commit-time FK error.
    The calls app's rules and calendars resolve their location through it too."""
    if location is None:
        return None
    return get_for_org(Location.objects.select_for_update(no_key=True), org, getattr(location, "pk", location))


LOCATION_FIELDS = ("name", "address", "timezone", "phone_number")


def _clean_location(org: Organization, values: dict) -> dict:
    values = {key: (value.strip() if isinstance(value, str) else value) for key, value in values.items()}
    _require_text(values, "name", "address", "timezone", "phone_number")
    check_lengths(values, KNOWLEDGE_CAPS)
    if "timezone" in values:
        _check_timezone(values["timezone"])
    if "phone_number" in values:
        values["phone_number"] = normalize_phone(values["phone_number"], region=org.default_phone_region)
    return values


@transaction.atomic
def location_create(*, org: Organization, name: str, address: str, timezone: str, phone_number: str) -> Location:
    """Creates a location; `timezone` must be an IANA name, the phone is stored E.164. Duplicate name: 409."""
    values = _clean_location(org, {"name": name, "address": address, "timezone": timezone,
                                   "phone_number": phone_number})
    location = _save(Location(organization=org, **values), conflict_field="name")
    knowledge_version_bump(org=org)
    return location


@transaction.atomic
def location_update(*, location: Location, **changes) -> Location:
    """Changes any of name, address, timezone, phone_number."""
    return _update(location, changes, clean=_clean_location, allowed=LOCATION_FIELDS, conflict_field="name")


@transaction.atomic
def location_delete(*, location: Location) -> None:
    """Deletes a location; its facts stay, applying to the whole org (location set to null)."""
    org = location.organization
    Location.objects.select_for_update().filter(pk=location.pk).first()  # waits for whatever is linking to it
    location.delete()
    knowledge_version_bump(org=org)


FACT_FIELDS = ("label", "content", "location")


def _clean_fact(org: Organization, values: dict) -> dict:
    if "label" in values and isinstance(values["label"], str):
        values["label"] = values["label"].strip()
    _require_text(values, "label", "content")
    check_lengths(values, KNOWLEDGE_CAPS)
    if "location" in values:
        values["location"] = resolve_location(org, values["location"])
    return values


@transaction.atomic
def fact_create(*, org: Organization, label: str, content: str, location=None) -> Fact:
    """Creates a fact (`location`: a Location or id of this org, or None for org-wide). Duplicate label: 409."""
    values = _clean_fact(org, {"label": label, "content": content, "location": location})
    fact = _save(Fact(organization=org, **values), conflict_field="label")
    knowledge_version_bump(org=org)
    return fact


@transaction.atomic
def fact_update(*, fact: Fact, **changes) -> Fact:
    """Changes any of label, content, location. A PUT passes all three."""
    return _update(fact, changes, clean=_clean_fact, allowed=FACT_FIELDS, conflict_field="label")


@transaction.atomic
def fact_delete(*, fact: Fact) -> None:
    org = fact.organization
    fact.delete()
    knowledge_version_bump(org=org)


TEAM_MEMBER_FIELDS = ("name", "email", "phone_number", "role")


def _clean_team_member(org: Organization, values: dict) -> dict:
    if "name" in values and isinstance(values["name"], str):
        values["name"] = values["name"].strip()
    for field in ("email", "phone_number", "role"):
        if field in values:
            values[field] = optional_text(values[field])
    _require_text(values, "name")
    check_lengths(values, KNOWLEDGE_CAPS)
    check_email(values.get("email"))
    if values.get("phone_number") is not None:
        values["phone_number"] = normalize_phone(values["phone_number"], region=org.default_phone_region)
    return values


def _guard_platform_user(member: TeamMember) -> None:
    # The spec: a team member who is a platform user (a dashboard login) cannot be changed through the API. The
    # dashboard keeps the same rule (it shows such members locked), so no caller may change or delete one.
    if member.is_platform_user:
        raise Forbidden("A team member who is a platform user cannot be changed here.")


@transaction.atomic
def team_member_create(
    *, org: Organization, name: str, email: str | None = None, phone_number: str | None = None,
    role: str | None = None, user=None,
) -> TeamMember:
    """Creates a team member. `user` links a dashboard login (only the dashboard passes it), which makes the
    member a platform user; the user must belong to the org."""
    values = _clean_team_member(org, {"name": name, "email": email, "phone_number": phone_number, "role": role})
    if user is not None and not Membership.objects.filter(user=user, organization=org).exists():
        raise ValidationFailed(field_errors={"user": ["This user is not a member of the organization."]})
    member = _save(TeamMember(organization=org, user=user, **values), conflict_field="user")
    knowledge_version_bump(org=org)
    return member


@transaction.atomic
def team_member_update(*, member: TeamMember, **changes) -> TeamMember:
    """Changes any of name, email, phone_number, role. A platform user's record raises Forbidden, from every
    interface (the API and the dashboard alike)."""
    _guard_platform_user(member)
    return _update(member, changes, clean=_clean_team_member, allowed=TEAM_MEMBER_FIELDS, conflict_field="user")


@transaction.atomic
def team_member_delete(*, member: TeamMember) -> None:
    """Deletes a team member; a platform user's record raises Forbidden. A member that escalation rules route to
    is kept: 409 with `details.field` = `escalation_rules`, the message naming the rules (their foreign key
    protects the member, so no rule is ever left without its destination)."""
    _guard_platform_user(member)
    org = member.organization
    # Locked before the rules that protect it are looked up: a rule being pointed at it holds a row lock, so this
    # waits for that rule to commit and then finds it.
    TeamMember.objects.select_for_update().filter(pk=member.pk).first()
    try:
        with transaction.atomic():
            member.delete()
    except ProtectedError as exc:
        names = sorted(rule.name for rule in exc.protected_objects)
        raise Conflict("escalation_rules", f"Escalation rules route to this team member: {', '.join(names)}. "
                       "Change or delete them first.") from None
    knowledge_version_bump(org=org)


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


_calendar_delete_guards: list[Callable[[Calendar], None]] = []


def calendar_delete_guard(guard: Callable[[Calendar], None]) -> None:
    """Registers a check that runs, with the calendar's row locked, before a calendar is deleted; it raises to
    refuse. The bookings of a calendar are the calls app's, which registers its rule in its AppConfig.ready()."""
    _calendar_delete_guards.append(guard)


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
    if "weekly_hours" in changes and (problems := weekly_hours.weekly_hours_problems(changes["weekly_hours"])):
        errors["weekly_hours"] = problems
    if errors:
        raise ValidationFailed(field_errors=errors)
    if changes.get("location") is not None:
        changes["location"] = resolve_location(org, changes["location"])
    return changes


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
    for guard in _calendar_delete_guards:
        guard(locked)
    org = calendar.organization
    locked.delete()
    knowledge_version_bump(org=org)
