"""The light CRM: an organization's callers and the people it adds through the API or the dashboard."""

from django.db import models

from orgs.tenancy import OrgOwnedModel


class Contact(OrgOwnedModel):
    """A person the organization knows by phone number.

    `phone_number` is E.164 (normalized by contacts.services in the org's default region) and unique per org
    through a constraint, so concurrent creates give one row and IntegrityErrors, never duplicates.
    `phone_digits` is the number without `+`, kept for digit search; on PostgreSQL name, email and
    phone_digits carry pg_trgm GIN indexes (migration 0001) so substring search stays fast at 100,000 rows.
    `first_call_id` names the call that created it (no FK yet: the Call model lives in calls/).
    """

    class Source(models.TextChoices):
        API = "api", "API"
        DASHBOARD = "dashboard", "Dashboard"
        INBOUND_CALL = "inbound_call", "Inbound call"

    phone_number = models.CharField(max_length=32)
    phone_digits = models.CharField(max_length=32, editable=False)
    name = models.CharField(max_length=200, null=True, blank=True)
    email = models.EmailField(max_length=254, null=True, blank=True)
    notes = models.TextField(null=True, blank=True)  # <= 5,000 characters, enforced by the services and the API
    source = models.CharField(max_length=16, choices=Source.choices)
    first_call_id = models.UUIDField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "phone_number"], name="uniq_contact_phone_per_org")
        ]
        indexes = [models.Index(fields=["organization", "-created_at", "-id"], name="contact_org_created_idx")]

    def __str__(self):
        return self.name or self.phone_number
