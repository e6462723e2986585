"""Writes on organizations, memberships and API keys. Each service is one transaction."""

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from voiceagent.errors import Conflict, ValidationFailed

from .errors import NotAnAdmin
from .keys import VISIBLE_PREFIX_LENGTH, digest_key, generate_key
from .models import ApiKey, Membership, Organization

User = get_user_model()


def require_admin(*, user, org: Organization) -> Membership:
    """The membership of an org admin, or NotAnAdmin. Every admin-only action goes through this."""
    membership = Membership.objects.filter(user=user, organization=org).first() if user and user.pk else None
    if membership is None or not membership.is_admin:
        raise NotAnAdmin("Only an organization admin can do this.")
    return membership


def user_get_or_create(*, email: str, password: str | None = None):
    email = User.objects.normalize_email(email).lower()
    user = User.objects.filter(username=email).first()
    if user is None:
        user = User(username=email, email=email)
        if password:
            user.set_password(password)
        else:
            user.set_unusable_password()
        user.save()
    return user


@transaction.atomic
def organization_create(*, name: str, admin_email: str, admin_password: str | None = None, **org_settings):
    """Creates an organization and its first admin (a new or existing user). Returns (org, user)."""
    org = Organization.objects.create(name=name, **org_settings)
    user = user_get_or_create(email=admin_email, password=admin_password)
    Membership.objects.create(user=user, organization=org, role=Membership.Role.ADMIN)
    return org, user


@transaction.atomic
def organization_update(*, org: Organization, by, **changes) -> Organization:
    require_admin(user=by, org=org)
    for field, value in changes.items():
        setattr(org, field, value)
    org.save(update_fields=[*changes, "updated_at"])
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
    """Revokes at once: authentication reads the row on every request, so no process keeps trusting it."""
    require_admin(user=revoked_by, org=key.organization)
    ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now(), revoked_by=revoked_by)
    key.refresh_from_db()
    return key


@transaction.atomic
def membership_add(*, org: Organization, by, email: str, role: str) -> Membership:
    require_admin(user=by, org=org)
    if role not in Membership.Role.values:
        raise ValidationFailed(field_errors={"role": ["Role must be admin or member."]})
    user = user_get_or_create(email=email)
    try:
        with transaction.atomic():
            return Membership.objects.create(user=user, organization=org, role=role)
    except IntegrityError:
        raise Conflict("email", "This person is already a member.") from None


@transaction.atomic
def membership_set_role(*, membership: Membership, by, role: str) -> Membership:
    require_admin(user=by, org=membership.organization)
    if role not in Membership.Role.values:
        raise ValidationFailed(field_errors={"role": ["Role must be admin or member."]})
    locked = Membership.objects.select_for_update().get(pk=membership.pk)
    if locked.role == Membership.Role.ADMIN and role != Membership.Role.ADMIN:
        other_admins = (
            Membership.objects.select_for_update()
            .filter(organization=locked.organization, role=Membership.Role.ADMIN)
            .exclude(pk=locked.pk)
        )
        if not other_admins.exists():
            raise ValidationFailed(form_errors=["An organization keeps at least one admin."])
    locked.role = role
    locked.save(update_fields=["role"])
    return locked
