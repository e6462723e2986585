"""The webhook outbox: subscriptions, events (payload bytes fixed once), deliveries and their attempts.

An `Event` is written in the same transaction as the change that caused it, with one `Delivery` per
matching subscription. Workers send deliveries; every HTTP try leaves a `DeliveryAttempt`. Retry timing
is `Delivery.next_attempt_at` in the database, and a worker's claim on a delivery is a lease
(`claimed_until`), so a delivery whose worker died is picked up again by the sweeper.
"""

import json
import uuid

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from orgs.tenancy import AtLocation, LocationRule, OrgOwnedModel, OrgOwnedQuerySet, Unlocated

from . import crypto

# docs/webhooks.md#event-types' nine, in its order, then the privacy events, then the operational ones: alerts (the
# alerts app emits them), the line watchdog, and the webhook subscriptions' own health (the sender emits them).
EVENT_TYPES = (
    "call.ended",
    "call.recording_ready",
    "call_order.status_changed",
    "call.callback_requested",
    "call.message_taken",
    "call.escalation_triggered",
    "call.appointment_booked",
    "contact.created",
    "meeting.outcome_approved",
    # Privacy (docs/privacy.md): a call's content was deleted; a caller was erased. Ids only.
    "call.content_deleted",
    "contact.erased",
    "alert.triggered",
    "alert.resolved",
    "location.line_silent",
    "webhook_subscription.failing",
    "webhook_subscription.disabled",
    "webhook_subscription.recovered",
)
API_VERSION = "v1"


class BytesField(models.BinaryField):
    """A BinaryField that always gives `bytes` (PostgreSQL hands back a memoryview), so json.loads works on it."""

    def from_db_value(self, value, expression, connection):
        return None if value is None else bytes(value)

    def to_python(self, value):
        value = super().to_python(value)
        return bytes(value) if isinstance(value, (memoryview, bytearray)) else value


class WithinScope(LocationRule):
    """Subscriptions (through `path`, the lookup to one) seen and changed by a principal limited to locations only
    when limited to some of those too (docs/api.md#locations-and-scope): the organization-wide ones, and those that
    reach beyond the scope, are another principal's."""

    what = "organization-wide webhook subscriptions"

    def __init__(self, path: str = ""):
        self.path = path
        self.lookup = f"{path}__location_ids" if path else "location_ids"

    def visible(self, location_ids):
        return Q(**{f"{self.lookup}__contained_by": list(location_ids)})  # null (the whole organization): never

    def writable(self, row, location_ids):
        if self.path:
            return True  # a delivery is seen only through a subscription of the scope
        return row.location_ids is not None and set(row.location_ids) <= location_ids


class Subscription(OrgOwnedModel):
    """An org's HTTPS endpoint and the event types it receives.

    The signing secret is stored Fernet-encrypted (settings.FIELD_ENCRYPTION_KEY), never in clear; only its
    first 8 characters are kept readable for `secret_preview`. During a rotation grace period the previous
    secret also signs, until `previous_secret_expires_at`.
    """

    location_rule = WithinScope()

    url = models.CharField(max_length=2048)
    events = models.JSONField(default=list)
    enabled = models.BooleanField(default=True)
    description = models.CharField(max_length=5000, blank=True, default="")
    secret_encrypted = models.TextField()
    secret_preview = models.CharField(max_length=8)
    previous_secret_encrypted = models.TextField(blank=True, default="")
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.CharField(max_length=500, blank=True, default="")
    disabled_at = models.DateTimeField(null=True, blank=True)
    # Health: the last 2xx, and the start of the current unbroken run of failures (None while healthy).
    last_success_at = models.DateTimeField(null=True, blank=True)
    failing_since = models.DateTimeField(null=True, blank=True)
    # The subscriber's own cap on deliveries per second (None: no cap). Enforced in the claim (delivery/claim.py) by
    # a GCRA whose state is `rate_tat`, the theoretical arrival time of the next send: each claimed delivery gets a
    # send slot 1/rate after the previous one, so no window of W seconds sees more than rate x W + 1 sends.
    rate_limit_per_second = models.PositiveSmallIntegerField(null=True, blank=True)
    rate_tat = models.DateTimeField(null=True, blank=True)
    # Fair delivery (docs/webhooks.md#fair-delivery): None is the full in-flight share (WEBHOOK_MAX_IN_FLIGHT); an
    # endpoint that times out, refuses connections or answers 429 has it halved (at least 1) until its next 2xx,
    # with the reason and, for a 429's Retry-After, a time before which nothing more is claimed for it.
    in_flight_limit = models.PositiveSmallIntegerField(null=True, blank=True)
    slowed_reason = models.CharField(max_length=200, blank=True, default="")
    slowed_at = models.DateTimeField(null=True, blank=True)
    paused_until = models.DateTimeField(null=True, blank=True)
    # When a claim last served this subscription: claims take the subscriptions served longest ago first (round
    # robin across claims and worker processes; delivery.claim._LOCK_FAIR_SQL). Not indexed, so its update stays HOT.
    claimed_at = models.DateTimeField(null=True, blank=True)
    # The locations (orgs.Location ids, an array as on keys) whose events it receives; null: the whole
    # organization's, location-less events included. Never empty (orgs.scopes checks it); a location in use here
    # cannot be deleted (knowledge's delete guard), so a scope is never silently widened.
    location_ids = ArrayField(models.UUIDField(), null=True, blank=True)

    # Operational events (docs/webhooks.md#operational-events): failed attempts since the last success, and when
    # `webhook_subscription.failing` was sent for the current streak (None: not sent; cleared by a success, which
    # sends `webhook_subscription.recovered`).
    consecutive_failures = models.PositiveIntegerField(default=0)
    failing_announced_at = models.DateTimeField(null=True, blank=True)

    # What `set_enabled` changes: save these (with updated_at) after it.
    ENABLED_FIELDS = ("enabled", "disabled_reason", "disabled_at", "failing_since")

    class Meta:
        indexes = [models.Index(fields=["organization", "enabled"], name="webhooks_sub_org_enabled")]

    def __str__(self):
        return f"{self.url} ({self.pk})"

    @staticmethod
    def covering(location_id) -> Q:
        """The subscriptions that receive an event at `location_id`: the organization-wide ones, and, for a located
        event, those limited to locations including it (a location-less event goes to the organization-wide only)."""
        whole_org = Q(location_ids__isnull=True)
        return whole_org if location_id is None else whole_org | Q(location_ids__contains=[location_id])

    def set_enabled(self, enabled: bool, *, reason: str = "", now=None) -> bool:
        """The one rule for switching delivery on or off, whoever does it (a user through `subscription_update`,
        the sender after a 410 or days of failures): disabling records why (default "Disabled by a user.") and
        when; enabling clears both and restarts the failure clock. Changes this instance only (the caller holds
        the row's lock and saves `ENABLED_FIELDS`); False when it already was so."""
        if enabled == self.enabled:
            return False
        if enabled:
            self.disabled_reason = ""
            self.disabled_at = None
            self.failing_since = None  # a fresh start: the 5-day clock restarts
        else:
            self.disabled_reason = reason or "Disabled by a user."
            self.disabled_at = now or timezone.now()
        self.enabled = enabled
        return True

    @property
    def secret(self) -> str:
        return crypto.decrypt(self.secret_encrypted)

    def signing_secrets(self, now) -> list[str]:
        """The secrets that sign now: the current one, plus the previous one while its grace period lasts."""
        secrets_ = [self.secret]
        if self.previous_secret_encrypted and self.previous_secret_expires_at and self.previous_secret_expires_at > now:
            secrets_.append(crypto.decrypt(self.previous_secret_encrypted))
        return secrets_


class Event(models.Model):
    """One emitted event. `payload` is the exact envelope body, serialized once and sent as is on every attempt."""

    id = models.CharField(primary_key=True, max_length=40, editable=False)
    organization = models.ForeignKey("orgs.Organization", on_delete=models.CASCADE, related_name="+")
    type = models.CharField(max_length=64)
    api_version = models.CharField(max_length=8, default=API_VERSION)
    created_at = models.DateTimeField(db_index=True)
    payload = BytesField()
    # The call the event is about (catalog.CALL_ID_FIELDS), so a call's trace is an index read. Not a foreign key:
    # webhooks ranks below calls, and an event outlives nothing it names.
    call_id = models.UUIDField(null=True, blank=True)
    # Where it happened: the location of the call (or booking) that caused it, None when nothing located did. It
    # decides which subscriptions receive it and which scoped principals see it (docs/webhooks.md#locations). Not a
    # foreign key, as `call_id`: a deleted location's events stay what they were, reachable org-wide only.
    location_id = models.UUIDField(null=True, blank=True)

    objects = OrgOwnedQuerySet.as_manager()
    # A principal limited to locations sees their events only: a location-less event is the whole organization's.
    location_rule = AtLocation("location_id", what="events")

    class Meta:
        indexes = [
            models.Index(fields=["organization", "created_at"], name="webhooks_event_org_created"),
            models.Index(
                fields=["call_id", "created_at"], name="webhooks_event_call", condition=models.Q(call_id__isnull=False)
            ),
            # A scoped feed, newest first: one ordered range per location (location ids are unique across orgs).
            models.Index(
                fields=["location_id", "created_at"], name="webhooks_event_location",
                condition=models.Q(location_id__isnull=False),
            ),
        ]

    def __str__(self):
        return f"{self.id} {self.type}"

    @staticmethod
    def new_id() -> str:
        return f"evt_{uuid.uuid4().hex}"

    @property
    def data(self):
        return json.loads(self.payload)["data"]


class CallEventSequence(models.Model):
    """The last `sequence` given to an event about one call (docs/webhooks.md#sequence): emit takes the next under
    this row's lock, so a call's events are numbered 1, 2, 3 ... in the order their transactions commit. The number
    is in the stored body, so a retry or a replay carries the same one. Not a foreign key, as `Event.call_id`."""

    call_id = models.UUIDField(primary_key=True)
    last = models.PositiveIntegerField(default=0)

    def __str__(self):
        return f"{self.call_id}: {self.last}"


class Delivery(OrgOwnedModel):
    """One event to one subscription. `pending` until a 2xx (`succeeded`) or until attempts run out (`failed`).

    A worker claims it with a conditional UPDATE that sets `claimed_until` (a lease) and `claim_token`; the
    result of the HTTP try is only recorded by the holder of that token. `enqueued_at` is when it was last
    put on the broker, so the sweeper re-enqueues only what has waited too long (a lost enqueue).
    """

    location_rule = WithinScope("subscription")

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    # No single-column index on created_at either (OrgOwnedModel's): with one, a quiet endpoint's delivery-log page
    # was planned as a walk back through every endpoint's newest deliveries (filtered by subscription: 1,254 buffers
    # at 10M rows of history against 100 empty), and each claim's UPDATE wrote an entry into it. The retention
    # purge's walk has its own partial index of finished rows below.
    created_at = models.DateTimeField(auto_now_add=True, db_index=False)
    # No single-column indexes on these two: the unique (event, subscription) and (subscription, created_at) indexes
    # lead with them, and every index is one more write on each of a delivery's three updates.
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries", db_index=False)
    subscription = models.ForeignKey(
        Subscription, on_delete=models.CASCADE, related_name="deliveries", db_index=False
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempt_count = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    next_trigger = models.CharField(max_length=16, default="scheduled")
    enqueued_at = models.DateTimeField(null=True, blank=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    claim_token = models.UUIDField(null=True, blank=True)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    succeeded_at = models.DateTimeField(null=True, blank=True)
    # 0 live traffic, 1 replay and recover: within one subscription live deliveries go first; across subscriptions
    # the claim serves each its share in turn whatever the priority, so a replay never queues ahead of other tenants.
    priority = models.PositiveSmallIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["event", "subscription"], name="uniq_delivery_event_sub")]
        indexes = [
            # The fair claim's two reads: each subscription's due deliveries in order (and, by a skip scan, which
            # subscriptions have any), and each subscription's claims in flight.
            models.Index(
                fields=["subscription", "priority", "next_attempt_at"], name="webhooks_delivery_sub_due",
                condition=Q(status="pending"),
            ),
            models.Index(
                fields=["subscription", "claimed_until"], name="webhooks_delivery_inflight",
                condition=Q(claim_token__isnull=False),
            ),
            # The retention purge's walk (webhooks.retention), in (created_at, id) order: finished rows only, so the
            # walk never reads a pending one and a claim (of pending rows) never writes here.
            models.Index(
                fields=["created_at", "id"], name="webhooks_delivery_done_created", condition=~Q(status="pending")
            ),
            # Only pending rows: a delivery leaves this index when it is done, so the claim's "oldest due" scan
            # reads the queue, not the log (with every row in it, a drain left thousands of dead entries that each
            # claim walked until vacuum; docs/benchmarks.md#figures-behind-the-code).
            models.Index(fields=["next_attempt_at"], name="webhooks_delivery_due", condition=Q(status="pending")),
            models.Index(fields=["subscription", "created_at"], name="webhooks_delivery_sub_created"),
        ]

    def __str__(self):
        return f"{self.event_id} -> {self.subscription_id} ({self.status})"


class DeliveryAttempt(OrgOwnedModel):
    """One HTTP try of a delivery: when, why (scheduled or manual), the status, duration, 2 KB of the reply, error."""

    location_rule = WithinScope("delivery__subscription")

    class Trigger(models.TextChoices):
        SCHEDULED = "scheduled", "Scheduled"
        MANUAL = "manual", "Manual"

    # Indexed by (delivery, created_at) in Meta, which serves lookups by delivery alone too.
    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempts", db_index=False)
    # The delivery's subscription, copied so an endpoint's statistics are one index range (not a join through every
    # delivery). Not a foreign key: a check per logged attempt for a value copied from a row that has one.
    subscription_id = models.UUIDField(null=True, blank=True)
    number = models.PositiveIntegerField()
    trigger = models.CharField(max_length=16, choices=Trigger.choices, default=Trigger.SCHEDULED)
    status_code = models.PositiveIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    response_body = models.TextField(blank=True, default="")
    error = models.TextField(blank=True, default="")

    class Meta:
        indexes = [
            models.Index(fields=["delivery", "created_at"], name="webhooks_attempt_delivery"),
            # Endpoint statistics (selectors.subscription_stats): an index-only range scan per subscription and window.
            models.Index(
                fields=["subscription_id", "created_at"], name="webhooks_attempt_sub_created",
                include=["status_code", "duration_ms"],
            ),
            # Its most frequent errors: failed attempts only, with their error.
            models.Index(
                fields=["subscription_id", "created_at"], name="webhooks_attempt_sub_failed", include=["error"],
                condition=~Q(error=""),
            ),
        ]

    def save(self, *args, **kwargs):
        if self.subscription_id is None and self.delivery_id is not None:
            self.subscription_id = Delivery.objects.filter(pk=self.delivery_id).values_list(
                "subscription_id", flat=True
            ).first()
        super().save(*args, **kwargs)


class ReplayRun(OrgOwnedModel):
    """One replay or recover and how many deliveries it queued: the ledger of the organization's hourly replay
    quota (QUOTA_REPLAY_DELIVERIES_PER_HOUR), written in the transaction that queued them, under the organization's
    row lock, so concurrent replays count each other (webhooks.quotas)."""

    location_rule = Unlocated()

    class Kind(models.TextChoices):
        REPLAY = "replay", "Replay"
        RECOVER = "recover", "Recover"

    subscription_id = models.UUIDField(null=True, blank=True)  # not a key: the ledger outlives a deleted endpoint
    kind = models.CharField(max_length=16, choices=Kind.choices)
    queued = models.PositiveIntegerField()

    class Meta:
        indexes = [models.Index(fields=["organization", "created_at"], name="webhooks_replayrun_org_created")]
