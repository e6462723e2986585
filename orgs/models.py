"""Organizations, who belongs to them, and the API keys they use."""

import uuid
from zoneinfo import ZoneInfo

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q

from core.sensitive import DEFAULT_KINDS

from .tenancy import Nowhere, OrgOwnedModel, OrgOwnedQuerySet, ReadOnlyWithin


def default_redaction_kinds() -> list[str]:
    """Every organization, existing ones included, starts redacting these (docs/privacy.md#redaction)."""
    return list(DEFAULT_KINDS)


class Organization(models.Model):
    """A customer of the service. Its settings steer what calls produce (contacts, recordings, meetings)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    default_phone_region = models.CharField(max_length=2, default="US")
    auto_save_contacts = models.BooleanField(default=True)
    call_recording_enabled = models.BooleanField(default=True)
    meetings_enabled = models.BooleanField(default=False)
    # IANA name (core.timezones checks it in the services). The dashboard shows times and the overview and analytics
    # count days in it; the API stays UTC. Still "UTC" when its first location is created, it takes that one's zone.
    time_zone = models.CharField(max_length=64, default="UTC")
    # Bumped (with F(), in the same transaction) by every write to facts, locations and team members, so the
    # agent runtime's knowledge ETag changes on the very next read. See knowledge.selectors.
    knowledge_version = models.PositiveBigIntegerField(default=0)
    # What is redacted from calls' text at ingest (core.sensitive.KINDS), and whether a call's audio is kept when a
    # card, government id or bank account number was heard on it (orgs.redaction).
    redaction_kinds = ArrayField(models.CharField(max_length=32), default=default_redaction_kinds, blank=True)
    keep_recordings_with_sensitive_data = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return self.name

    @property
    def zone(self) -> ZoneInfo:
        """The organization's zone, the one answer for every local date and time shown or counted for it."""
        return ZoneInfo(self.time_zone)


class Membership(models.Model):
    """A dashboard user's place in an organization. Admins manage keys, webhooks and members."""

    location_rule = Nowhere(what="memberships")

    class Role(models.TextChoices):
        ADMIN = "admin", "Admin"
        MEMBER = "member", "Member"
        # Sees and works on its `location_ids` only (docs/api.md#locations-and-scope).
        LOCATION_MANAGER = "location_manager", "Location manager"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    # The locations this member is limited to; null: the whole organization. Never empty (orgs.scopes checks each
    # id and locks it). An array, not a relation, as on keys and invitations: the scope is read with its row on every
    # request (no join), and a location in use here cannot be deleted (knowledge.services.location_delete).
    location_ids = ArrayField(models.UUIDField(), null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OrgOwnedQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "organization"], name="uniq_membership")]

    def __str__(self):
        return f"{self.user_id} in {self.organization_id} ({self.role})"

    @property
    def is_admin(self) -> bool:
        return self.role == self.Role.ADMIN

    @property
    def writes_knowledge(self) -> bool:
        """Admins, and location managers within their scope (the services' check_writable decides which rows)."""
        return self.is_admin or self.role == self.Role.LOCATION_MANAGER


class ApiKey(OrgOwnedModel):
    """An API key. Only its SHA-256 digest and its 12-character prefix are stored, never the plaintext."""

    location_rule = Nowhere(what="API keys")

    class Scope(models.TextChoices):
        READ = "read", "Read"
        READ_WRITE = "read_write", "Read and write"
        # `audit` reads the audit trail (/v1/audit-events); `read` alone never grants it.
        READ_AUDIT = "read_audit", "Read and audit"
        READ_WRITE_AUDIT = "read_write_audit", "Read, write and audit"
        # `privacy` asks for and reads erasures and suppressions (/v1/privacy/erasure-requests, /suppressions).
        READ_PRIVACY = "read_privacy", "Read and privacy"
        READ_WRITE_PRIVACY = "read_write_privacy", "Read, write and privacy"
        READ_AUDIT_PRIVACY = "read_audit_privacy", "Read, audit and privacy"
        READ_WRITE_AUDIT_PRIVACY = "read_write_audit_privacy", "Read, write, audit and privacy"

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=200)
    key_prefix = models.CharField(max_length=12)
    key_digest = models.CharField(max_length=64, unique=True)
    scope = models.CharField(max_length=32, choices=Scope.choices, default=Scope.READ)
    # The locations this key is limited to (as Membership.location_ids); null: the whole organization.
    location_ids = ArrayField(models.UUIDField(), null=True, blank=True)
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
        return SCOPES_OF[self.scope]

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def __str__(self):
        return f"{self.name} ({self.key_prefix}...)"


SCOPES_OF = {
    ApiKey.Scope.READ: ["read"],
    ApiKey.Scope.READ_WRITE: ["read", "write"],
    ApiKey.Scope.READ_AUDIT: ["read", "audit"],
    ApiKey.Scope.READ_WRITE_AUDIT: ["read", "write", "audit"],
    ApiKey.Scope.READ_PRIVACY: ["read", "privacy"],
    ApiKey.Scope.READ_WRITE_PRIVACY: ["read", "write", "privacy"],
    ApiKey.Scope.READ_AUDIT_PRIVACY: ["read", "audit", "privacy"],
    ApiKey.Scope.READ_WRITE_AUDIT_PRIVACY: ["read", "write", "audit", "privacy"],
}


class Invitation(OrgOwnedModel):
    """An admin's invitation of an e-mail address into an organization, with a role.

    Nothing else exists until the invitee accepts from the e-mailed link, signed in (or signing up) as that very
    address. The link's token is never stored: it is an HMAC of (id, nonce) under the server's secret
    (orgs.invitations.token_for), and only its SHA-256 is kept, so neither the database nor the e-mail outbox holds
    a usable link. Resending draws a new nonce, which kills the previous link. One use; 7 days.
    """

    location_rule = Nowhere(what="invitations")

    email = models.CharField(max_length=254)  # lower-cased
    role = models.CharField(max_length=16, choices=Membership.Role.choices, default=Membership.Role.MEMBER)
    # A location manager's locations, given to the membership its acceptance creates (as Membership.location_ids);
    # null for the other roles. A location an open invitation names cannot be deleted.
    location_ids = ArrayField(models.UUIDField(), null=True, blank=True)
    nonce = models.CharField(max_length=32)
    token_digest = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    expires_at = models.DateTimeField()
    sent_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "email"],
                condition=models.Q(accepted_at__isnull=True, revoked_at__isnull=True),
                name="uniq_open_invitation",
            ),
        ]

    def __str__(self):
        return f"{self.email} to {self.organization_id} ({self.role})"

    @property
    def is_open(self) -> bool:
        return self.accepted_at is None and self.revoked_at is None


class EmailVerification(models.Model):
    """That a user receives mail at their address: a link we mailed there was used (sign-up, an invitation, a
    password reset) or an operator vouched for it (`create_org`). An account without one cannot invite members
    (orgs.invitations), so no invitation goes out in the name of an address nobody confirmed."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="email_verification"
    )
    email = models.EmailField(max_length=254)  # the address confirmed: a changed address is unconfirmed again
    verified_at = models.DateTimeField()

    def __str__(self):
        return f"{self.email} ({self.verified_at:%Y-%m-%d})"


class Location(OrgOwnedModel):
    """A place the organization answers calls for. Managed in the dashboard (knowledge.services writes it, under the
    knowledge version); read through /v1/locations. It sits here, beside the keys, members and invitations its id
    limits, below everything that references it.

    `name` is unique per org (a constraint, not a check); `timezone` is an IANA name checked with zoneinfo and
    `phone_number` is E.164, both by the services.
    """

    location_rule = ReadOnlyWithin(lambda ids: Q(pk__in=ids), what="locations")

    name = models.CharField(max_length=200)
    address = models.CharField(max_length=5000)
    timezone = models.CharField(max_length=64)
    phone_number = models.CharField(max_length=32)
    # When the location is open: local wall-clock windows in `timezone` (knowledge.weekly_hours), as a calendar's.
    # Empty: open every hour. The line watchdog (alerts) counts expected calls only while the location is open.
    weekly_hours = models.JSONField(default=list, blank=True)

    class Meta:
        db_table = "orgs_location"
        constraints = [models.UniqueConstraint(fields=["organization", "name"], name="uniq_location_name_per_org")]
        indexes = [models.Index(fields=["organization", "-created_at", "-id"], name="location_org_created_idx")]

    def __str__(self):
        return self.name
