"""What an organization keeps and for how long: its retention policy (and each location's), the callers it was asked
to erase, and the numbers whose calls keep no content (docs/privacy.md#retention-and-erasure).

No row here holds a caller's number: an erasure request and a suppression keep a keyed digest of it
(privacy.digests), and the request a masked form for people to recognise it (`+1•••••••0100`).
"""

from django.contrib.postgres.fields import ArrayField
from django.db import models

from orgs.models import Location
from orgs.tenancy import AtLocation, Nowhere, OrgOwnedModel

# Days a retention limit may be: one day to ten years; null keeps forever.
MIN_DAYS = 1
MAX_DAYS = 3650
# What a new organization starts with (an existing one keeps nothing-expires until an admin chooses: 0001).
DEFAULT_RECORDINGS_DAYS = 90
DEFAULT_TRANSCRIPTS_DAYS = 365


class RetentionPolicy(models.Model):
    """An organization's retention: days after a call's start that its recording and its transcript (the rest of its
    content: calls.services.content) are kept; null keeps them. No row: the defaults of a new organization."""

    organization = models.OneToOneField("orgs.Organization", on_delete=models.CASCADE, primary_key=True,
                                        related_name="+")
    recordings_days = models.PositiveIntegerField(null=True, blank=True)
    transcripts_days = models.PositiveIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.organization_id}: recordings {self.recordings_days}, transcripts {self.transcripts_days}"


class LocationRetention(OrgOwnedModel):
    """A location's own retention, in place of the organization's for that location's calls (null keeps)."""

    location_rule = AtLocation("location")

    location = models.ForeignKey(Location, on_delete=models.CASCADE, related_name="+")
    recordings_days = models.PositiveIntegerField(null=True, blank=True)
    transcripts_days = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "location"], name="uniq_location_retention")]


class ErasureRequest(OrgOwnedModel):
    """A caller's erasure, asked for through the API or the dashboard and carried out by a worker
    (privacy.tasks.run_erasure). What it erases is resolved when it is asked for and kept as ids (`targets`), so the
    worker never needs the number; `counts` are what it deleted; `event_id` is its `contact.erased`, whose deliveries
    are the subscribers' confirmations."""

    location_rule = Nowhere(what="erasure requests")

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"

    phone_digest = models.CharField(max_length=64, blank=True, default="")
    phone_number_masked = models.CharField(max_length=40, blank=True, default="")
    contact_id = models.UUIDField(null=True, blank=True)  # not a key: the contact is what it deletes
    suppress = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    call_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    targets = models.JSONField(default=dict, blank=True)  # {"bookings": [ids], "callbacks": [...], "messages": [...]}
    counts = models.JSONField(default=dict, blank=True)
    event_id = models.CharField(max_length=40, null=True, blank=True)
    requested_by = models.CharField(max_length=300, blank=True, default="")
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["organization", "-created_at", "-id"], name="erasure_org_created_idx")]


class Suppression(OrgOwnedModel):
    """A number whose later calls keep no content (tombstones from the start): its keyed digest, never the number."""

    location_rule = Nowhere(what="suppressions")

    phone_digest = models.CharField(max_length=64)
    phone_number_masked = models.CharField(max_length=40, blank=True, default="")
    erasure_request = models.ForeignKey(ErasureRequest, on_delete=models.SET_NULL, null=True, blank=True,
                                        related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "phone_digest"], name="uniq_suppression")]
