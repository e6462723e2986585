"""Organizations, who belongs to them, and the API keys they use."""

import uuid

from django.conf import settings
from django.db import models

from .tenancy import OrgOwnedModel, OrgOwnedQuerySet


class Organization(models.Model):
    """A customer of the service. Its settings steer what calls produce (contacts, recordings, meetings)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    default_phone_region = models.CharField(max_length=2, default="US")
    auto_save_contacts = models.BooleanField(default=True)
    call_recording_enabled = models.BooleanField(default=True)
    meetings_enabled = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return self.name


class Membership(models.Model):
    """A dashboard user's place in an organization. Admins manage keys, webhooks and members."""

    class Role(models.TextChoices):
        ADMIN = "admin", "Admin"
        MEMBER = "member", "Member"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OrgOwnedQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "organization"], name="uniq_membership")]

    @property
    def is_admin(self) -> bool:
        return self.role == self.Role.ADMIN


class ApiKey(OrgOwnedModel):
    """An API key. Only its SHA-256 digest and its 12-character prefix are stored, never the plaintext."""

    class Scope(models.TextChoices):
        READ = "read", "Read"
        READ_WRITE = "read_write", "Read and write"

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=200)
    key_prefix = models.CharField(max_length=12)
    key_digest = models.CharField(max_length=64, unique=True)
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.READ)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    @property
    def scopes(self) -> list[str]:
        return ["read", "write"] if self.scope == self.Scope.READ_WRITE else ["read"]

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
