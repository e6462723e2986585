"""Writes on organizations, memberships and API keys. Each service is one transaction."""

import re
import secrets
import unicodedata

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from audit import services as audit
from core import counters
from core.errors import Conflict, NotFound, ValidationFailed
from core.timezones import check_timezone
from core.validation import check_lengths

from . import key_epochs, quotas, verification
from .errors import LastAdmin, NotAnAdmin, TooManyOrganizations
from .keys import VISIBLE_PREFIX_LENGTH, digest_key, generate_key
from .models import ApiKey, Membership, Organization
from .scopes import audited_location_ids, clean_location_ids, clean_member_scope
from .verification import mark_verified, never_verified, require_verified

User = get_user_model()


@transaction.atomic
def account_audit(*, action: str, email: str, user=None, org=None) -> None:
    """Records an account's event (signed in, failed to, signed out, password reset asked or done) in one trail:
    `org`, the organization the session acts in (the one a sign-in lands in, the one a sign-out leaves), or under
    no organization when no session of the account acts (a failed sign-in, a reset asked or completed: anyone can
    cause those, so they never reach the account's organizations). Each organization of the account therefore
    sees only what was done in it, never the addresses and browsers its members use elsewhere
    (docs/api.md#audit-trail). Never the password."""
    email = _normalize_email(email or "")[:254]
    if user is None and email:
        user = User.objects.filter(username=email).first()
    actor = audit.user_actor(user) if user is not None else audit.Actor("user", None, email)
    if org is not None and (user is None or not Membership.objects.filter(user=user, organization=org).exists()):
        org = None  # only an organization the account belongs to
    audit.record(org=org, action=action, actor=actor, target_type="user",
                 target_id=user.pk if user is not None else None, target_label=email or actor.label)


@transaction.atomic
def account_confirm(*, code: str, password: str | None = None):
    """Confirms the address of the account `code` (orgs.verification) was made for; returns (user, password_set).

    An account whose address was never confirmed may have been made by someone else with this address (a sign-up
    does not prove the mailbox): its confirmer, who does hold the mailbox, chooses the password (`password`,
    validated by the caller; ValidationFailed on `password` without one), which ends every session the account had
    (Django checks each session against the password's hash), and every API key the account made before is
    revoked. VerificationInvalid for a code that is not valid."""
    user = verification.check(code=code, lock=True)
    first = never_verified(user)
    if first:
        if not password:
            raise ValidationFailed(field_errors={"password": ["Choose a password for this account."]})
        user.set_password(password)
        user.save(update_fields=["password"])
    account_mailbox_proven(user=user)
    return user, first


def account_mailbox_proven(*, user) -> None:
    """`user` just used a link mailed to their address (a confirmation, a password reset): the address is theirs.
    The first time, the keys the account made before are revoked: they may be a squatter's (see account_confirm).
    The caller has set the password (which ends the account's other sessions) when it had to."""
    with transaction.atomic():
        if never_verified(user):
            _revoke_keys_made_by(user)
        mark_verified(user=user)


def _revoke_keys_made_by(user) -> None:
    keys = list(ApiKey.objects.select_for_update().filter(created_by=user, revoked_at__isnull=True).order_by("pk"))
    if not keys:
        return
    now = timezone.now()
    ApiKey.objects.filter(pk__in=[key.pk for key in keys]).update(revoked_at=now, revoked_by=None)
    key_epochs.keys_changed([key.key_digest for key in keys])
    for key in keys:
        audit.record(org=key.organization_id, action="api_key.revoked", target=key, actor=audit.SYSTEM,
                     changes={"revoked_at": [None, now]})


_CONTROLS = re.compile(r"[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]+")


def clean_org_name(name) -> str:
    """An organization's name as stored: control characters (newlines, tabs, escapes, bidirectional overrides) are
    spaces, runs of spaces one, no space at either end. The name is shown in pages, mails and subjects, where a
    newline could start a line of the name-giver's choosing. ValidationFailed on `name` when nothing is left."""
    name = re.sub(r"\s+", " ", _CONTROLS.sub(" ", unicodedata.normalize("NFC", str(name or "")))).strip()
    if not name:
        raise ValidationFailed(field_errors={"name": ["This field is required."]})
    check_lengths({"name": name}, {"name": 200})
    return name


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
    where an existing user must not be handed to whoever typed their email (see `organization_signup`). An account
    it creates counts as confirmed (the operator vouches for the address); an existing one keeps its password and
    its confirmation state."""
    org = Organization.objects.create(name=clean_org_name(name), **org_settings)
    user, created = _user_get_or_create(email=admin_email, password=admin_password)
    if created:
        mark_verified(user=user)
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
    name = clean_org_name(name)
    user = account_create(email=email, password=password)
    org = Organization.objects.create(name=name, **org_settings)
    Membership.objects.create(user=user, organization=org, role=Membership.Role.ADMIN)
    return org, user


@transaction.atomic
def organization_update(*, org: Organization, by, **changes) -> Organization:
    """Changes the organization's settings (admins only), audited as `organization.updated`. `time_zone` must be an
    IANA name."""
    require_admin(user=by, org=org)
    if "name" in changes:
        changes["name"] = clean_org_name(changes["name"])
    if "time_zone" in changes:
        check_timezone(changes["time_zone"], field="time_zone")
    before = {field: getattr(org, field) for field in changes}
    for field, value in changes.items():
        setattr(org, field, value)
    org.save(update_fields=[*changes, "updated_at"])
    if diff := audit.diff(before, changes):
        audit.record(org=org, action="organization.updated", target=org, changes=diff)
    _keys_reread(org)
    return org


def _keys_reread(org: Organization) -> None:
    # API keys cache their organization's settings: they read it again on their next request.
    key_epochs.keys_changed(ApiKey.objects.filter(organization=org, revoked_at__isnull=True).values_list(
        "key_digest", flat=True))


@transaction.atomic
def organization_take_first_location_zone(*, org: Organization, time_zone: str, actor=None) -> None:
    """Gives the organization the zone of its first location (knowledge.services.location_create calls it in its
    transaction, with the location saved), unless its zone is no longer the default UTC (someone chose one).

    One conditional UPDATE: of two first locations created at once, the second waits for the first's lock on the
    organization's row, then finds its zone no longer UTC and changes nothing."""
    if time_zone == "UTC" or not Organization.objects.filter(pk=org.pk, time_zone="UTC").update(time_zone=time_zone):
        return
    audit.record(org=org, action="organization.updated", target=org, actor=audit.actor_of(actor),
                 changes={"time_zone": ["UTC", time_zone]})
    _keys_reread(org)


@transaction.atomic
def api_key_create(*, org: Organization, created_by, name: str, scope: str,
                   location_ids: list | None = None) -> tuple[ApiKey, str]:
    """Creates a key and returns it with its plaintext, which exists only in this return value. Conflict
    (`api_keys`) when the organization has QUOTA_API_KEYS_PER_ORG active keys already. `location_ids` limits the
    key to those locations of the org (orgs.scopes; None: the whole organization). An account whose address is not
    confirmed makes none (EmailNotVerified): a key would outlive the confirmation of the address's real owner."""
    require_admin(user=created_by, org=org)
    require_verified(user=created_by, action="creating API keys")
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise ValidationFailed(field_errors={"name": ["Name must be 1 to 200 characters."]})
    if scope not in ApiKey.Scope.values:
        raise ValidationFailed(field_errors={"scope": [f"Scope must be one of {', '.join(ApiKey.Scope.values)}."]})
    location_ids = clean_location_ids(org=org, location_ids=location_ids)
    quotas.lock_organization(org)
    quotas.check_api_keys(org)
    plaintext = generate_key()
    key = ApiKey.objects.create(
        organization=org,
        name=name,
        scope=scope,
        key_prefix=plaintext[:VISIBLE_PREFIX_LENGTH],
        key_digest=digest_key(plaintext),
        created_by=created_by,
        location_ids=location_ids,
    )
    created = {"name": key.name, "scopes": key.scopes, "key_prefix": key.key_prefix}
    if location_ids is not None:
        created["location_ids"] = [str(pk) for pk in location_ids]
    audit.record(org=org, action="api_key.created", target=key, changes=audit.created(created))
    return key, plaintext


@transaction.atomic
def api_key_revoke(*, key: ApiKey, revoked_by) -> ApiKey:
    """Revokes at once: the key's epoch changes before this returns, so no process keeps trusting its cached copy
    (orgs/key_epochs.py)."""
    require_admin(user=revoked_by, org=key.organization)
    revoked = ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(
        revoked_at=timezone.now(), revoked_by=revoked_by
    )
    key_epochs.keys_changed([key.key_digest])
    key.refresh_from_db()
    if revoked:  # revoking a revoked key changes nothing, and records nothing
        audit.record(org=key.organization, action="api_key.revoked", target=key,
                     changes={"revoked_at": [None, key.revoked_at]})
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
    _leave(membership, action="membership.removed")


@transaction.atomic
def membership_leave(*, user, org: Organization) -> None:
    """`user` leaves `org`. LastAdmin when they are its only admin."""
    membership = Membership.objects.filter(user=user, organization=org).first()
    if membership is None:
        raise NotFound()
    _leave(membership, action="membership.left")


def _leave(membership: Membership, *, action: str) -> None:
    admins = _lock_admins(membership.organization_id)
    locked = Membership.objects.select_for_update().filter(pk=membership.pk).first()
    if locked is None:
        return  # already gone: removing twice is not an error
    if locked.is_admin and admins == [locked.pk]:
        raise LastAdmin(LAST_ADMIN)
    audit.record(org=membership.organization, action=action, target=locked, target_id=locked.user_id,
                 target_label=locked.user.email, changes={"role": [locked.role, None]})
    locked.delete()


@transaction.atomic
def organization_create_for(*, user, name: str) -> Organization:
    """A signed-in user creates another organization, of which they are the admin.

    Bounded per user, since each organization brings its own quotas and shares of the fleet's places: Conflict
    (`organizations`) once the user belongs to ORGS_PER_USER_MAX organizations (the user's row is locked, so two
    creations at once cannot both pass), TooManyOrganizations (429) past ORG_CREATIONS_PER_USER_PER_HOUR
    creations in an hour (counted in Redis for every process, only for a creation that passes every other
    check)."""
    name = clean_org_name(name)
    User.objects.select_for_update().filter(pk=user.pk).first()
    most = settings.ORGS_PER_USER_MAX
    if Membership.objects.filter(user=user).count() >= most:
        raise Conflict("organizations", f"You belong to {most} organizations, the most one account may: leave one "
                                        "before you create another.")
    per_hour = settings.ORG_CREATIONS_PER_USER_PER_HOUR
    if counters.hit_window(f"org-creations:{user.pk}", seconds=3600)[0] > per_hour:
        raise TooManyOrganizations(f"You can create at most {per_hour} organizations an hour: try again later.")
    org = Organization.objects.create(name=name)
    Membership.objects.create(user=user, organization=org, role=Membership.Role.ADMIN)
    return org


@transaction.atomic
def membership_set_role(*, membership: Membership, by, role: str, location_ids=None) -> Membership:
    """An admin changes a member's role and, for a location manager, the locations it is limited to
    (`clean_member_scope`: named for that role, none for the others). The member's next request sees the new scope:
    every dashboard request reads the membership from the database."""
    require_admin(user=by, org=membership.organization)
    if role not in Membership.Role.values:
        raise ValidationFailed(field_errors={"role": ["Role must be admin, member or location_manager."]})
    location_ids = clean_member_scope(org=membership.organization, role=role, location_ids=location_ids)
    admins = _lock_admins(membership.organization_id)
    locked = Membership.objects.select_for_update().get(pk=membership.pk)
    if locked.role == Membership.Role.ADMIN and role != Membership.Role.ADMIN and admins == [locked.pk]:
        raise ValidationFailed(form_errors=["An organization keeps at least one admin."])
    before = {"role": locked.role, "location_ids": audited_location_ids(locked.location_ids)}
    locked.role, locked.location_ids = role, location_ids
    locked.save(update_fields=["role", "location_ids"])
    after = {"role": role, "location_ids": audited_location_ids(location_ids)}
    changes = {name: [before[name], after[name]] for name in after if before[name] != after[name]}
    if changes:
        audit.record(org=membership.organization, action="membership.role_changed", target=locked,
                     target_id=locked.user_id, target_label=locked.user.email, changes=changes)
    return locked
