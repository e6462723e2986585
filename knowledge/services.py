"""Writes of what the agent runtime reads: locations, facts, team members, escalation rules, calendars and call
fields.

One write path for all six kinds. A create, an update or a delete cleans what it is given first, then (update and
delete) locks the row and changes that locked copy, never the caller's object, so a refused save leaves the
caller's instance as it was. The save runs in a savepoint that turns the kind's unique clash into Conflict (also
under a race), and the org's `knowledge_version` is bumped once, in the same transaction, so the runtime's
knowledge ETag (knowledge.selectors.knowledge_etag) changes on the very next read after commit.

The public services (`fact_create`, `calendar_update`, ...) are one per kind and operation, keyword-only, and take
the `actor` (a user, an API key, or None for the runtime and operators) for whatever records who changed what.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import IntegrityError, connection, models, transaction
from django.db.models import F, Func, ProtectedError, Q, Value

from audit import services as audit
from core.errors import Conflict, Forbidden, NotFound, ValidationFailed
from core.timezones import check_timezone, is_timezone
from core.validation import check_email, check_lengths, optional_text
from orgs import quotas
from orgs.models import ApiKey, Invitation, Location, Membership, Organization
from orgs.phones import normalize_phone
from orgs.scopes import clean_location_ids
from orgs.services import organization_take_first_location_zone
from orgs.tenancy import check_writable, get_for_org

from .models import Calendar, CallField, EscalationRule, Fact, TeamMember
from .weekly_hours import weekly_hours_problems

KNOWLEDGE_CAPS = {"name": 200, "label": 200, "address": 5000, "role": 200, "email": 254, "phone_number": 32,
                  "content": 10_000, "description": 5000}


def _nothing(instance) -> None:
    return None


@dataclass(frozen=True)
class Kind:
    """How one kind of knowledge row is written: the fields an update may change, how values are cleaned (with the
    org, before any row is locked), what the whole row must satisfy after a change, whether a row may be changed
    at all, and how its unique clash and its protected deletion read."""

    model: type[models.Model]
    fields: tuple[str, ...]
    clean: Callable[[Organization, dict], dict]
    conflict: tuple[str, str]  # (details.field, message) of the kind's unique constraint
    check: Callable[[models.Model], None] = _nothing
    guard: Callable[[models.Model], None] = _nothing
    protected: Callable[[ProtectedError], Exception] | None = None
    delete_guards: list[Callable[[models.Model], None]] = field(default_factory=list)
    clash: Callable[[models.Model], None] = _nothing  # a uniqueness no constraint can hold, checked before the save


def knowledge_version_bump(*, org: Organization) -> None:
    """Marks the org's knowledge as changed (an F() increment). Runs inside the transaction of the write, so the
    change and the new ETag commit together."""
    Organization.objects.filter(pk=org.pk).update(knowledge_version=F("knowledge_version") + 1)


def _changed(*, kind: Kind, action: str, instance, org: Organization, actor, before: dict | None = None) -> None:
    """What follows every knowledge write, once, in its transaction: the knowledge version moves, and the audit
    trail gets its entry. `action` is create, update or delete; `instance` the row as saved (as it was, for a
    delete); `actor` who did it; `before` the changed fields' values before an update."""
    knowledge_version_bump(org=org)
    if action == "update":
        changes = audit.diff(before or {}, audit.values_of(instance, list(before or {})))
        if not changes:
            return  # saved as it was: nothing to tell
    else:
        values = audit.values_of(instance, kind.fields)
        changes = audit.created(values) if action == "create" else audit.deleted(values)
    audit.record(org=org, action=f"{AUDIT_NAMES[kind.model]}.{action}d", target=instance, changes=changes,
                 target_label=getattr(instance, "name", None) or str(instance), actor=audit.actor_of(actor))


# Names that are unique per location (facts' labels, calendars' and escalation rules' names): a database constraint
# keeps them unique within one location, and among the location-less rows; `_refuse_name_clash` also keeps a located
# row from sharing its name with a location-less one, which every reader of that location sees beside it. Two rows
# of different locations may share a name: no reader limited to locations sees both, and a 409 for a row its scope
# cannot see would tell it that row exists (docs/api.md#locations-and-scope).
NAMES = {"Fact": "label", "Calendar": "name", "EscalationRule": "name"}


def _refuse_name_clash(kind: Kind, instance) -> None:
    """Conflict when `instance` (about to be saved) takes the name of a location-less row while it has a location,
    or of any row while it has none. Only a principal of the whole organization writes location-less rows, so
    neither answer tells a scope anything it cannot see. Writers of one name queue on a transaction-level advisory
    lock, so two racing writes cannot both pass."""
    field_name = NAMES.get(kind.model.__name__)
    if field_name is None:
        return
    name = getattr(instance, field_name)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                       [f"knowledge-name:{instance.organization_id}:{kind.model.__name__}:{name}"])
    others = kind.model.objects.filter(organization_id=instance.organization_id, **{field_name: name}).exclude(
        pk=instance.pk)
    if instance.location_id is not None:
        others = others.filter(location__isnull=True)
    if others.exists():
        raise Conflict(*kind.conflict)


def _save(kind: Kind, instance, update_fields: list[str] | None = None) -> None:
    field_name, message = kind.conflict
    try:
        with transaction.atomic():
            if update_fields is None:
                instance.save(force_insert=True)
            else:
                instance.save(update_fields=[*update_fields, "updated_at"])
    except IntegrityError:
        raise Conflict(field_name, message) from None


def _lock(kind: Kind, instance):
    """The row of `instance`, locked FOR UPDATE until the transaction ends, or None when it is gone meanwhile."""
    return kind.model.objects.select_for_update().filter(pk=instance.pk).first()


@transaction.atomic
def _create(kind: Kind, *, org: Organization, actor, values: dict):
    instance = kind.model(organization=org, **kind.clean(org, values))
    check_writable(org, instance)
    kind.check(instance)
    _refuse_name_clash(kind, instance)
    kind.clash(instance)
    _save(kind, instance)
    _changed(kind=kind, action="create", instance=instance, org=org, actor=actor)
    return instance


@transaction.atomic
def _update(kind: Kind, instance, *, actor, changes: dict):
    """Returns the saved copy (the caller's `instance` itself when nothing changes)."""
    kind.guard(instance)
    unknown = sorted(set(changes) - set(kind.fields))
    if unknown:
        raise ValidationFailed(form_errors=[f"Unrecognized key(s): {', '.join(unknown)}"])
    org = instance.organization  # seen through the scope it was read with (orgs.tenancy.get_for_org)
    check_writable(org, instance)
    values = kind.clean(org, dict(changes))
    if not values:
        return instance
    locked = _lock(kind, instance)
    if locked is None:
        raise NotFound()
    locked.organization = org
    kind.guard(locked)
    before = audit.values_of(locked, list(values))
    for name, value in values.items():
        setattr(locked, name, value)
    check_writable(org, locked)  # nor moved out of the scope (a location-less fact applies to every location)
    kind.check(locked)
    _refuse_name_clash(kind, locked)
    kind.clash(locked)
    _save(kind, locked, update_fields=list(values))
    _changed(kind=kind, action="update", instance=locked, org=org, actor=actor, before=before)
    return locked


@transaction.atomic
def _delete(kind: Kind, instance, *, actor) -> None:
    """Deleting a row that is already gone does nothing. The lock comes before the rows that depend on this one
    are looked at: one being pointed at it meanwhile holds a row lock, so this waits and then sees it."""
    kind.guard(instance)
    org = instance.organization
    check_writable(org, instance)
    locked = _lock(kind, instance)
    if locked is None:
        return
    kind.guard(locked)
    for guard in kind.delete_guards:
        guard(locked)
    try:
        with transaction.atomic():
            locked.delete()
    except ProtectedError as exc:
        if kind.protected is None:
            raise
        raise kind.protected(exc) from None
    locked.pk = instance.pk  # Django clears it on delete; what is recorded names the row
    _changed(kind=kind, action="delete", instance=locked, org=org, actor=actor)


def delete_guard(model: type[models.Model], guard: Callable[[models.Model], None]) -> None:
    """Registers a check that runs, with the row locked, before a row of `model` is deleted; it raises to refuse.
    For rules that belong to a higher app: the calls app keeps a calendar with upcoming bookings (its
    AppConfig.ready() registers the check)."""
    KINDS[model].delete_guards.append(guard)


# --- Cleaning, per kind ----------------------------------------------------------------------------------------


def _require_text(values: dict, *fields: str) -> None:
    errors = {name: ["This field may not be blank."] for name in fields if name in values and not values[name]}
    if errors:
        raise ValidationFailed(field_errors=errors)


def _strip(values: dict, *fields: str) -> dict:
    return {name: (value.strip() if isinstance(value, str) and name in fields else value)
            for name, value in values.items()}


def resolve_location(org: Organization, location):
    """A Location of `org` from an instance or an id; another org's or a missing one is NotFound (never linked).
    Locked (FOR NO KEY UPDATE) until the caller's transaction ends, so a concurrent `location_delete` either comes
    first (NotFound here) or waits and then unlinks what this transaction linked; never a commit-time FK error."""
    if location is None:
        return None
    return get_for_org(Location.objects.select_for_update(no_key=True), org, getattr(location, "pk", location))


def _clean_location(org: Organization, values: dict) -> dict:
    values = _strip(values, *values)
    _require_text(values, "name", "timezone")  # address and phone: the dashboard's form requires them
    check_lengths(values, KNOWLEDGE_CAPS)
    if "timezone" in values:
        check_timezone(values["timezone"])
    if values.get("phone_number"):
        values["phone_number"] = normalize_phone(values["phone_number"], region=org.default_phone_region)
    if "weekly_hours" in values:
        values["weekly_hours"] = [] if values["weekly_hours"] is None else values["weekly_hours"]
        if problems := weekly_hours_problems(values["weekly_hours"]):
            raise ValidationFailed(field_errors={"weekly_hours": problems})
    return values


def _clean_fact(org: Organization, values: dict) -> dict:
    values = _strip(values, "label")
    _require_text(values, "label", "content")
    check_lengths(values, KNOWLEDGE_CAPS)
    if "location" in values:
        values["location"] = resolve_location(org, values["location"])
    return values


def _clean_team_member(org: Organization, values: dict) -> dict:
    values = _strip(values, "name")
    for name in ("email", "phone_number", "role"):
        if name in values:
            values[name] = optional_text(values[name])
    _require_text(values, "name")
    check_lengths(values, KNOWLEDGE_CAPS)
    check_email(values.get("email"))
    if values.get("phone_number") is not None:
        values["phone_number"] = normalize_phone(values["phone_number"], region=org.default_phone_region)
    if values.get("user") is not None and not Membership.objects.filter(user=values["user"], organization=org).exists():
        raise ValidationFailed(field_errors={"user": ["This user is not a member of the organization."]})
    return values


def _guard_platform_user(member: TeamMember) -> None:
    # docs/api.md#team-members: a team member who is a platform user (a dashboard login) cannot be changed through the
    # API. The dashboard keeps the same rule (it shows such members locked), so no caller may change or delete one.
    if member.is_platform_user:
        raise Forbidden("A team member who is a platform user cannot be changed here.")


def _rules_route_to(exc: ProtectedError) -> Conflict:
    names = sorted(rule.name for rule in exc.protected_objects)
    return Conflict("escalation_rules", f"Escalation rules route to this team member: {', '.join(names)}. "
                    "Change or delete them first.")


def refuse_delete_of_location_in_scope(location: Location) -> None:
    """A location that a key, a member or an open invitation is limited to stays (409 naming them): deleting it would
    silently widen or empty their scope. Runs with the location locked; keys and members are scoped by the
    dashboard's admins."""
    ids = [location.pk]
    keys = sorted(ApiKey.objects.filter(organization_id=location.organization_id, revoked_at__isnull=True,
                                        location_ids__contains=ids).values_list("name", flat=True))
    if keys:
        raise Conflict("api_keys", f"API keys are limited to this location: {', '.join(keys)}. "
                       "Revoke them or change their locations first.")
    members = sorted(Membership.objects.filter(organization_id=location.organization_id, location_ids__contains=ids)
                     .values_list("user__username", flat=True))
    if members:
        raise Conflict("memberships", f"Members are limited to this location: {', '.join(members)}. "
                       "Change their locations first.")
    invited = sorted(Invitation.objects.filter(organization_id=location.organization_id, location_ids__contains=ids,
                                               accepted_at__isnull=True, revoked_at__isnull=True)
                     .values_list("email", flat=True))
    if invited:  # accepting would give a membership of a deleted location
        raise Conflict("invitations", f"Open invitations are limited to this location: {', '.join(invited)}. "
                       "Revoke them first.")


MAX_KEYWORDS, MAX_KEYWORD_LENGTH = 50, 100


def _clean_rule(org: Organization, values: dict) -> dict:
    """Keywords are 0..50 distinct (case-insensitively) strings of 1..100. The team member and the location resolve
    through this org (another org's: 404)."""
    values = _strip(values, "name", "description")
    if "name" in values and not values["name"]:
        raise ValidationFailed(field_errors={"name": ["This field may not be blank."]})
    check_lengths(values, KNOWLEDGE_CAPS)
    if "keywords" in values:
        values["keywords"] = _clean_keywords(values["keywords"])
    if values.get("destination_team_member") is not None:
        # Locked (FOR NO KEY UPDATE): a concurrent delete of this member waits for this transaction and then sees
        # the rule (409); one that came first leaves no row here (404). Never a rule pointing at a deleted member.
        values["destination_team_member"] = get_for_org(
            TeamMember.objects.select_for_update(no_key=True), org,
            getattr(values["destination_team_member"], "pk", values["destination_team_member"]),
        )
    if values.get("location") is not None:
        values["location"] = resolve_location(org, values["location"])
    if values.get("destination_phone") is not None:
        values["destination_phone"] = normalize_phone(values["destination_phone"], region=org.default_phone_region,
                                                      field="destination_phone")
    return values


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


def _check_rule(rule: EscalationRule) -> None:
    """The rule as it will be saved: the destination field its type names is set and the other is not, and it has
    keywords or a description."""
    kind, member, phone = rule.destination_type, rule.destination_team_member_id, rule.destination_phone
    errors = {}
    if kind not in EscalationRule.DestinationType.values:
        errors["destination_type"] = ["Must be team_member or phone."]
    elif kind == EscalationRule.DestinationType.TEAM_MEMBER:
        if member is None:
            errors["destination_team_member_id"] = ["Required when destination_type is team_member."]
        if phone is not None:
            errors["destination_phone"] = ["Must be null when destination_type is team_member."]
    else:
        if phone is None:
            errors["destination_phone"] = ["Required when destination_type is phone."]
        if member is not None:
            errors["destination_team_member_id"] = ["Must be null when destination_type is phone."]
    if errors:
        raise ValidationFailed(field_errors=errors)
    if not rule.keywords and not rule.description:
        raise ValidationFailed(form_errors=["A rule needs keywords or a description (what the runtime listens for)."])


MIN_SLOT_MINUTES, MAX_SLOT_MINUTES = 5, 480


def _clean_calendar(org: Organization, values: dict) -> dict:
    errors = {}
    if "name" in values:
        values["name"] = (values["name"] or "").strip()
        if not values["name"]:
            errors["name"] = ["This field may not be blank."]
        elif len(values["name"]) > KNOWLEDGE_CAPS["name"]:
            errors["name"] = [f"Ensure this field has no more than {KNOWLEDGE_CAPS['name']} characters."]
    if "timezone" in values and not is_timezone(values["timezone"]):
        errors["timezone"] = ["Enter a valid IANA time zone, e.g. America/New_York."]
    if "slot_minutes" in values and not (
        isinstance(values["slot_minutes"], int) and MIN_SLOT_MINUTES <= values["slot_minutes"] <= MAX_SLOT_MINUTES
    ):
        errors["slot_minutes"] = [f"Ensure this value is between {MIN_SLOT_MINUTES} and {MAX_SLOT_MINUTES}."]
    if "weekly_hours" in values and (problems := weekly_hours_problems(values["weekly_hours"])):
        errors["weekly_hours"] = problems
    if errors:
        raise ValidationFailed(field_errors=errors)
    if values.get("location") is not None:
        values["location"] = resolve_location(org, values["location"])
    return values


CALL_FIELD_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
CALL_FIELD_CAPS = {"name": 64, "label": 200, "description": 1000}
MAX_CHOICES, MAX_CHOICE_LENGTH = 50, 200


def _clean_call_field(org: Organization, values: dict) -> dict:
    values = _strip(values, "name", "label")
    _require_text(values, "name", "label")
    check_lengths(values, CALL_FIELD_CAPS)
    errors = {}
    if values.get("name") and not CALL_FIELD_NAME.fullmatch(values["name"]):
        errors["name"] = ["Use 1 to 64 lowercase letters, digits and underscores, starting with a letter."]
    if "type" in values and values["type"] not in CallField.Type.values:
        errors["type"] = [f"Must be one of: {', '.join(CallField.Type.values)}."]
    if "choices" in values:
        choices = values["choices"] if values["choices"] is not None else []
        if not isinstance(choices, list | tuple) or not all(isinstance(choice, str) for choice in choices):
            errors["choices"] = ["Must be a list of strings."]
        else:
            choices = [choice.strip() for choice in choices]
            problems = []
            if len(choices) > MAX_CHOICES:
                problems.append(f"Ensure this field has no more than {MAX_CHOICES} elements.")
            if any(not 1 <= len(choice) <= MAX_CHOICE_LENGTH for choice in choices):
                problems.append(f"Each choice must be 1 to {MAX_CHOICE_LENGTH} characters.")
            if len(set(choices)) != len(choices):
                problems.append("Choices must not repeat.")
            if problems:
                errors["choices"] = problems
            values["choices"] = choices
    if "required" in values and not isinstance(values["required"], bool):
        errors["required"] = ["Must be a boolean."]
    if errors:
        raise ValidationFailed(field_errors=errors)
    if "location_ids" in values:
        values["location_ids"] = clean_location_ids(org=org, location_ids=values["location_ids"])
    return values


def _check_call_field(call_field: CallField) -> None:
    """The field as it will be saved: an `enum` has 1 to 50 choices, any other type none."""
    if call_field.type == CallField.Type.ENUM and not call_field.choices:
        raise ValidationFailed(field_errors={"choices": ["An enum field needs 1 to 50 choices."]})
    if call_field.type != CallField.Type.ENUM and call_field.choices:
        raise ValidationFailed(field_errors={"choices": ["Only an enum field has choices."]})


def _refuse_call_field_overlap(call_field: CallField) -> None:
    """Conflict when another call field of this name applies at a location this one does (null: every location; an
    empty list, left by deleted locations: none), so at most one definition of a name applies to any call and a
    call's `fields` stay keyed by name. A field within a scope meets only fields at one of its locations, which
    that scope sees: the 409 never tells it of a field it cannot see (docs/api.md#call-fields).

    No constraint compares two lists, so the organization's row lock decides: `call_field_create` and
    `call_field_update`, the only writes that can make two definitions meet, hold it (deleting a location only
    shortens lists)."""
    others = CallField.objects.filter(organization_id=call_field.organization_id, name=call_field.name).exclude(
        pk=call_field.pk)
    if call_field.location_ids is None:
        others = others.exclude(location_ids=[])
    elif call_field.location_ids:
        others = others.filter(Q(location_ids__isnull=True) | Q(location_ids__overlap=call_field.location_ids))
    else:
        return
    if others.exists():
        raise Conflict(*CALL_FIELD_CONFLICT)


CALL_FIELD_CONFLICT = ("name", "A call field with this name already applies to one of these locations.")
LOCATION = Kind(Location, ("name", "address", "timezone", "phone_number", "weekly_hours"), _clean_location,
                ("name", "name already exists."), delete_guards=[refuse_delete_of_location_in_scope])
FACT = Kind(Fact, ("label", "content", "location"), _clean_fact, ("label", "label already exists."))
TEAM_MEMBER = Kind(TeamMember, ("name", "email", "phone_number", "role"), _clean_team_member,
                   ("user", "user already exists."), guard=_guard_platform_user, protected=_rules_route_to)
ESCALATION_RULE = Kind(EscalationRule, ("name", "description", "keywords", "enabled", "destination_type",
                                        "destination_team_member", "destination_phone", "location"),
                       _clean_rule, ("name", "An escalation rule with this name already exists."), check=_check_rule)
CALENDAR = Kind(Calendar, ("name", "location", "timezone", "slot_minutes", "weekly_hours"), _clean_calendar,
                ("name", "A calendar with this name already exists."))
CALL_FIELD = Kind(CallField, ("name", "label", "description", "type", "choices", "required", "location_ids"),
                  _clean_call_field, CALL_FIELD_CONFLICT, check=_check_call_field, clash=_refuse_call_field_overlap)
KINDS = {kind.model: kind for kind in (LOCATION, FACT, TEAM_MEMBER, ESCALATION_RULE, CALENDAR, CALL_FIELD)}
# The audit trail's name of each kind (audit/actions.py: `fact.created`, `team_member.deleted`, ...).
AUDIT_NAMES = {Location: "location", Fact: "fact", TeamMember: "team_member", EscalationRule: "escalation_rule",
               Calendar: "calendar", CallField: "call_field"}


# --- The services ------------------------------------------------------------------------------------------------


@transaction.atomic
def location_create(*, org: Organization, name: str, timezone: str, address: str = "", phone_number: str = "",
                    weekly_hours: list | None = None, actor=None) -> Location:
    """Creates a location; `timezone` must be an IANA name, the phone (when given) is stored E.164. Duplicate name:
    409. Address and phone may stay empty (the operator's `create_location`); the dashboard asks for both.

    An organization's first location sets its time zone, unless someone chose one already (it is no longer UTC)."""
    location = _create(LOCATION, org=org, actor=actor,
                       values={"name": name, "address": address, "timezone": timezone, "phone_number": phone_number,
                               "weekly_hours": weekly_hours or []})
    if not Location.objects.filter(organization=org).exclude(pk=location.pk).exists():
        organization_take_first_location_zone(org=org, time_zone=location.timezone, actor=actor)
    return location


def location_update(*, location: Location, actor=None, **changes) -> Location:
    """Changes any of name, address, timezone, phone_number, weekly_hours (the opening hours)."""
    return _update(LOCATION, location, actor=actor, changes=changes)


@transaction.atomic
def location_delete(*, location: Location, actor=None) -> None:
    """Deletes a location; its facts and calendars stay (location set to null), its escalation rules go, and it
    leaves the `location_ids` of the call fields that named it (a field whose last location goes applies to none
    until given another)."""
    _delete(LOCATION, location, actor=actor)
    CallField.objects.filter(organization_id=location.organization_id, location_ids__contains=[location.pk]).update(
        location_ids=Func(F("location_ids"), Value(location.pk, output_field=models.UUIDField()),
                          function="array_remove"))


def fact_create(*, org: Organization, label: str, content: str, location=None, actor=None) -> Fact:
    """Creates a fact (`location`: a Location or id of this org, or None for org-wide). Duplicate label: 409."""
    return _create(FACT, org=org, actor=actor, values={"label": label, "content": content, "location": location})


def fact_update(*, fact: Fact, actor=None, **changes) -> Fact:
    """Changes any of label, content, location. A PUT passes all three."""
    return _update(FACT, fact, actor=actor, changes=changes)


def fact_delete(*, fact: Fact, actor=None) -> None:
    _delete(FACT, fact, actor=actor)


def team_member_create(
    *, org: Organization, name: str, email: str | None = None, phone_number: str | None = None,
    role: str | None = None, user=None, actor=None,
) -> TeamMember:
    """Creates a team member. `user` links a dashboard login (only the dashboard passes it), which makes the
    member a platform user; the user must belong to the org."""
    return _create(TEAM_MEMBER, org=org, actor=actor, values={"name": name, "email": email,
                                                              "phone_number": phone_number, "role": role,
                                                              "user": user})


def team_member_update(*, member: TeamMember, actor=None, **changes) -> TeamMember:
    """Changes any of name, email, phone_number, role. A platform user's record raises Forbidden, from every
    interface (the API and the dashboard alike)."""
    return _update(TEAM_MEMBER, member, actor=actor, changes=changes)


def team_member_delete(*, member: TeamMember, actor=None) -> None:
    """Deletes a team member; a platform user's record raises Forbidden. A member that escalation rules route to
    is kept: 409 with `details.field` = `escalation_rules`, the message naming the rules (their foreign key
    protects the member, so no rule is ever left without its destination)."""
    _delete(TEAM_MEMBER, member, actor=actor)


def escalation_rule_create(
    *, org: Organization, name: str, destination_type: str, destination_team_member=None,
    destination_phone: str | None = None, keywords: list[str] | None = None, description: str = "",
    enabled: bool = True, location=None, actor=None,
) -> EscalationRule:
    """Creates an escalation rule (the runtime's next read serves it when enabled). `destination_team_member` and
    `location`: instances or ids of this org. Duplicate name: 409."""
    return _create(ESCALATION_RULE, org=org, actor=actor, values={
        "name": name, "description": description or "", "keywords": list(keywords or []), "enabled": enabled,
        "destination_type": destination_type, "destination_team_member": destination_team_member,
        "destination_phone": destination_phone, "location": location,
    })


def escalation_rule_update(*, rule: EscalationRule, actor=None, **changes) -> EscalationRule:
    """Changes any of the rule's fields (enabling and disabling included), checked against the rule they produce."""
    return _update(ESCALATION_RULE, rule, actor=actor, changes=changes)


def escalation_rule_delete(*, rule: EscalationRule, actor=None) -> None:
    """Deletes a rule; its past escalations stay, with its name."""
    _delete(ESCALATION_RULE, rule, actor=actor)


def calendar_create(*, org: Organization, name: str, timezone_name: str = "UTC", location=None,
                    slot_minutes: int = 30, weekly_hours: list[dict] | None = None, actor=None) -> Calendar:
    """Creates a bookable calendar. Duplicate name: 409."""
    return _create(CALENDAR, org=org, actor=actor, values={
        "name": name, "timezone": timezone_name, "location": location, "slot_minutes": slot_minutes,
        "weekly_hours": [] if weekly_hours is None else weekly_hours,
    })


def calendar_update(*, calendar: Calendar, actor=None, **changes) -> Calendar:
    """Changes any of name, location, timezone (or `timezone_name`), slot_minutes, weekly_hours (existing bookings
    stay)."""
    if "timezone_name" in changes:
        changes["timezone"] = changes.pop("timezone_name")
    return _update(CALENDAR, calendar, actor=actor, changes=changes)


def calendar_delete(*, calendar: Calendar, actor=None) -> None:
    """Deletes a calendar unless a registered guard refuses (the calls app: upcoming confirmed bookings, 409
    `conflict` with `details.field` = `bookings`); its past and canceled bookings stay, their calendar null."""
    _delete(CALENDAR, calendar, actor=actor)


def call_field_create(*, org: Organization, name: str, label: str, type: str, description: str = "",  # noqa: A002
                      choices: list[str] | None = None, required: bool = False, location_ids: list | None = None,
                      actor=None) -> CallField:
    """Creates a call field: the runtime's next knowledge read tells the agent to listen for it, and completions
    may report it. A name another field has at one of the same locations: 409 (`_refuse_call_field_overlap`, under
    the organization's row lock taken here). At most QUOTA_CALL_FIELDS_PER_ORG per organization (409
    `call_fields`): every call's completion, page and export carries them all."""
    with transaction.atomic():
        quotas.lock_organization(org)
        quotas.check_count(
            field="call_fields", used=CallField.objects.filter(organization_id=org.pk).count(),
            limit=settings.QUOTA_CALL_FIELDS_PER_ORG, what="call fields", setting="QUOTA_CALL_FIELDS_PER_ORG",
            free="Delete a call field to create another.",
        )
        return _create(CALL_FIELD, org=org, actor=actor, values={
            "name": name, "label": label, "type": type, "description": description or "",
            "choices": list(choices or []), "required": required, "location_ids": location_ids,
        })


@transaction.atomic
def call_field_update(*, call_field: CallField, actor=None, **changes) -> CallField:
    """Changes any of the field's attributes, checked against the field they produce (a name or locations that
    meet another field's: 409). Past calls keep what they were stored with (name, label and value).

    The organization's row is locked first, as `call_field_create` locks it, before any location or field row:
    the same order in both, so two writes never wait on each other's locks."""
    quotas.lock_organization(call_field.organization)
    return _update(CALL_FIELD, call_field, actor=actor, changes=changes)


def call_field_delete(*, call_field: CallField, actor=None) -> None:
    """Deletes a call field; past calls keep their values under the name they were stored with."""
    _delete(CALL_FIELD, call_field, actor=actor)
