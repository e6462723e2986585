"""The audit trail: one append-only row per change, and each organization's hash chain over them.

The table refuses UPDATE and DELETE (a trigger, migrations/0001): the only UPDATE it allows is the sealing of a
row (setting `chain_seq`, `prev_hash` and `hash` once, nothing else), the only DELETE the retention purge of rows
older than the cutoff it declares in the transaction-local setting `audit.purge_before` (audit.services.purge).
"""

import uuid

from django.db import models

# Entries about no organization (a sign-in failure for an address nobody has) belong to this id's chain.
NO_ORGANIZATION = uuid.UUID(int=0)
GENESIS_HASH = "0" * 64


class AuditEventQuerySet(models.QuerySet):
    def for_org(self, org):
        # The trail is the whole organization's: nothing of it within a location scope (orgs.tenancy.scoped).
        if getattr(org, "scope_location_ids", None) is not None:
            return self.none()
        return self.filter(organization_id=org.pk)


class AuditEvent(models.Model):
    """Who did what to which object, when and from where. Written by `audit.services.record` in the transaction
    of the change it records; sealed into the org's chain right after commit (`audit.services.seal`).

    No foreign keys: an entry outlives the user, key, object and even the organization it names.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization_id = models.UUIDField()
    occurred_at = models.DateTimeField()
    action = models.CharField(max_length=64)
    actor_type = models.CharField(max_length=16)
    actor_id = models.CharField(max_length=64, null=True)
    actor_label = models.CharField(max_length=300)
    target_type = models.CharField(max_length=32)
    target_id = models.CharField(max_length=64, null=True)
    target_label = models.CharField(max_length=300)
    changes = models.JSONField(default=dict)
    ip = models.CharField(max_length=64, null=True)
    user_agent = models.CharField(max_length=512, null=True)
    request_id = models.CharField(max_length=64, null=True)
    # The chain, set once by the sealer: position in the org's chain (1, 2, ...), the previous entry's hash, and
    # sha256 over this entry's canonical bytes (audit.chain.canonical_bytes).
    chain_seq = models.BigIntegerField(null=True)
    prev_hash = models.CharField(max_length=64, null=True)
    hash = models.CharField(max_length=64, null=True)
    # Keyed with a secret outside the database (audit.keys): `content_mac` over the entry's content when written,
    # `chain_mac` over its hash when sealed. Neither is shown by the API; `verify` checks both.
    content_mac = models.CharField(max_length=64, null=True)
    chain_mac = models.CharField(max_length=64, null=True)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        db_table = "audit_event"
        indexes = [
            models.Index("organization_id", models.F("occurred_at").desc(), models.F("id").desc(),
                         name="audit_org_occurred_idx"),
            models.Index("organization_id", "actor_id", models.F("occurred_at").desc(), name="audit_org_actor_idx"),
            models.Index("organization_id", "target_id", models.F("occurred_at").desc(), name="audit_org_target_idx"),
            models.Index("organization_id", "occurred_at", "id", condition=models.Q(hash__isnull=True),
                         name="audit_unsealed_idx"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["organization_id", "chain_seq"], name="uniq_audit_chain_seq"),
        ]

    def __str__(self):
        return f"{self.action} by {self.actor_label}"


class AuditChain(models.Model):
    """The head of one organization's chain: the last sealed position and hash (so removing the newest entries
    shows), and where the retention purge cut the chain (so removing the oldest ones shows too)."""

    organization_id = models.UUIDField(primary_key=True)
    last_seq = models.BigIntegerField(default=0)
    last_hash = models.CharField(max_length=64, default=GENESIS_HASH)
    purged_through_seq = models.BigIntegerField(default=0)
    purged_through_hash = models.CharField(max_length=64, default=GENESIS_HASH)
    # The checkpoint: every entry after the purge's cut through this position was found intact (by a verify request
    # or a verification job), and this is the hash there; a verify request checks only what came after.
    verified_through_seq = models.BigIntegerField(default=0)
    verified_through_hash = models.CharField(max_length=64, default=GENESIS_HASH)
    verified_at = models.DateTimeField(null=True)

    class Meta:
        db_table = "audit_chain"

    def __str__(self):
        return f"{self.organization_id} at {self.last_seq}"


class AuditVerification(models.Model):
    """A full re-check of one organization's chain, run by a worker in batches (`POST /v1/audit-events/verifications`).
    At most one queued or running per organization (a partial unique index). `checked_through_seq` and
    `checked_through_hash` are its progress, saved after every batch, so a task redelivered after a worker died
    resumes where it was."""

    QUEUED, RUNNING, SUCCEEDED, FAILED = "queued", "running", "succeeded", "failed"
    ACTIVE = (QUEUED, RUNNING)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization_id = models.UUIDField()
    status = models.CharField(max_length=16, default=QUEUED)
    created_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True)
    finished_at = models.DateTimeField(null=True)
    updated_at = models.DateTimeField()
    head_seq = models.BigIntegerField(null=True)  # the chain's head when the job started: it checks up to there
    checked_through_seq = models.BigIntegerField(null=True)
    checked_through_hash = models.CharField(max_length=64, null=True)
    entries_checked = models.BigIntegerField(default=0)
    intact = models.BooleanField(null=True)
    first_broken_id = models.UUIDField(null=True)
    error = models.CharField(max_length=200, null=True)

    objects = AuditEventQuerySet.as_manager()  # the organization's, and nothing of it within a location scope

    class Meta:
        db_table = "audit_verification"
        indexes = [models.Index("organization_id", models.F("created_at").desc(), name="audit_verif_org_idx")]
        constraints = [
            models.UniqueConstraint(fields=["organization_id"], condition=models.Q(status__in=("queued", "running")),
                                    name="uniq_audit_verification_active"),
        ]

    def __str__(self):
        return f"verification {self.id} ({self.status})"
