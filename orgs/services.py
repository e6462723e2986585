"""Writes on organizations, memberships and API keys. Each service is one transaction."""

import secrets
from functools import cache
from zoneinfo import available_timezones

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import F, ProtectedError
from django.utils import timezone

from voiceagent.errors import Conflict, Forbidden, NotFound, ValidationFailed
from voiceagent.validation import check_email, check_lengths, optional_text

from . import key_epochs
from .errors import LastAdmin, NotAnAdmin
from .keys import VISIBLE_PREFIX_LENGTH, digest_key, generate_key
from .models import ApiKey, Fact, Location, Membership, Organization, TeamMember
from .phones import normalize_phone
from .tenancy import get_for_org

User = get_user_model()


def require_admin(*, user, org: Organization) -> Membership:
    """The membership of an org admin, or NotAnAdmin. Every admin-only action goes through this."""
    membership = Membership.objects.filter(user=user, organization=org).first() if user and user.pk else None
    if membership is None or not membership.is_admin:
        raise NotAnAdmin("Only an organization admin can do this.")
    return membership


def _normalize_email(email: str) -> str:
    """Emails are usernames, always stored lower-case."""
    return User.objects.normalize_email(email).lower()


def _user_get_or_create(*, email: str, password: str | None = None):
    """(user, created). A user created without a password gets a random, unguessable one rather than an unusable
    one: Django's password reset (PasswordResetForm.get_users) skips unusable passwords, and that reset is how an
    invited person sets theirs."""
    email = _normalize_email(email)
    user = User.objects.filter(username=email).first()
    if user is not None:
        return user, False
    user = User(username=email, email=email)
    user.set_password(password or secrets.token_urlsafe(32))
    try:
        with transaction.atomic():
            user.save(force_insert=True)
    except IntegrityError:  # created meanwhile by a concurrent request: that user it is
        return User.objects.get(username=email), False
    return user, True


def user_get_or_create(*, email: str, password: str | None = None):
    """The user with this email, or a new one. An existing user's password is left alone."""
    return _user_get_or_create(email=email, password=password)[0]


@transaction.atomic
def organization_create(*, name: str, admin_email: str, admin_password: str | None = None, **org_settings):
    """Creates an organization and its first admin (a new or existing user). Returns (org, user).

    For operators (`create_org`, seeding), who may attach an existing person; never for self-service sign-up,
    where an existing user must not be handed to whoever typed their email (see `organization_signup`)."""
    org = Organization.objects.create(name=name, **org_settings)
    user = user_get_or_create(email=admin_email, password=admin_password)
    Membership.objects.create(user=user, organization=org, role=Membership.Role.ADMIN)
    return org, user


def account_create(*, email: str, password: str):
    """A brand-new user. The unique username decides (not an earlier check): taken is Conflict("email")."""
    email = _normalize_email(email)
    try:
        with transaction.atomic():
            return User.objects.create_user(username=email, email=email, password=password)
    except IntegrityError:
        raise Conflict("email", "An account with this email already exists. Log in instead.") from None


@transaction.atomic
def organization_signup(*, name: str, email: str, password: str, **org_settings):
    """Self-service sign-up: a brand-new user and a new organization they are admin of. Returns (org, user).

    The email must not belong to anyone yet. The unique username decides, not an earlier check (a user committed
    between the form's check and this insert is caught here): taken is Conflict("email") and nothing is written.
    """
    user = account_create(email=email, password=password)
    org = Organization.objects.create(name=name, **org_settings)
    Membership.objects.create(user=user, organization=org, role=Membership.Role.ADMIN)
    return org, user


@transaction.atomic
def organization_update(*, org: Organization, by, **changes) -> Organization:
    require_admin(user=by, org=org)
    for field, value in changes.items():
        setattr(org, field, value)
    org.save(update_fields=[*changes, "updated_at"])
    # API keys cache their organization's settings: they read it again on their next request.
    key_epochs.keys_changed(ApiKey.objects.filter(organization=org, revoked_at__isnull=True).values_list(
        "key_digest", flat=True))
    return org


@transaction.atomic
def api_key_create(*, org: Organization, created_by, name: str, scope: str) -> tuple[ApiKey, str]:
    """Creates a key and returns it with its plaintext, which exists only in this return value."""
    require_admin(user=created_by, org=org)
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise ValidationFailed(field_errors={"name": ["Name must be 1 to 200 characters."]})
    if scope not in ApiKey.Scope.values:
        raise ValidationFailed(field_errors={"scope": [f"Scope must be one of {', '.join(ApiKey.Scope.values)}."]})
    plaintext = generate_key()
    key = ApiKey.objects.create(
        organization=org,
        name=name,
        scope=scope,
        key_prefix=plaintext[:VISIBLE_PREFIX_LENGTH],
        key_digest=digest_key(plaintext),
        created_by=created_by,
    )
    return key, plaintext


@transaction.atomic
def api_key_revoke(*, key: ApiKey, revoked_by) -> ApiKey:
    """Revokes at once: the key's epoch changes before this returns, so no process keeps trusting its cached copy
    (orgs/key_epochs.py)."""
    require_admin(user=revoked_by, org=key.organization)
    ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now(), revoked_by=revoked_by)
    key_epochs.keys_changed([key.key_digest])
    key.refresh_from_db()
    return key


def _lock_admins(org_id) -> list:
    """Locks the org's admin rows, in one statement and in primary-key order (two admins acting on each other
    queue instead of deadlocking, and the second sees the first's change); returns their ids."""
    return list(
        Membership.objects.select_for_update()
        .filter(organization_id=org_id, role=Membership.Role.ADMIN)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


LAST_ADMIN = "An organization keeps at least one admin: make another member an admin first."


@transaction.atomic
def membership_remove(*, membership: Membership, by) -> None:
    """An admin removes a member (themselves included). The member's next request no longer reaches the org:
    every dashboard request resolves the membership from the database. LastAdmin for the org's only admin."""
    require_admin(user=by, org=membership.organization)
    _leave(membership)


@transaction.atomic
def membership_leave(*, user, org: Organization) -> None:
    """`user` leaves `org`. LastAdmin when they are its only admin."""
    membership = Membership.objects.filter(user=user, organization=org).first()
    if membership is None:
        raise NotFound()
    _leave(membership)


def _leave(membership: Membership) -> None:
    admins = _lock_admins(membership.organization_id)
    locked = Membership.objects.select_for_update().filter(pk=membership.pk).first()
    if locked is None:
        return  # already gone: removing twice is not an error
    if locked.is_admin and admins == [locked.pk]:
        raise LastAdmin(LAST_ADMIN)
    locked.delete()


@transaction.atomic
def organization_create_for(*, user, name: str) -> Organization:
    """A signed-in user creates another organization, of which they are the admin."""
    name = (name or "").strip()
    if not name:
        raise ValidationFailed(field_errors={"name": ["This field is required."]})
    check_lengths({"name": name}, {"name": 200})
    org = Organization.objects.create(name=name)
    Membership.objects.create(user=user, organization=org, role=Membership.Role.ADMIN)
    return org


@transaction.atomic
def membership_set_role(*, membership: Membership, by, role: str) -> Membership:
    require_admin(user=by, org=membership.organization)
    if role not in Membership.Role.values:
        raise ValidationFailed(field_errors={"role": ["Role must be admin or member."]})
    admins = _lock_admins(membership.organization_id)
    locked = Membership.objects.select_for_update().get(pk=membership.pk)
    if locked.role == Membership.Role.ADMIN and role != Membership.Role.ADMIN and admins == [locked.pk]:
        raise ValidationFailed(form_errors=["An organization keeps at least one admin."])
    locked.role = role
    locked.save(update_fields=["role"])
    return locked


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
