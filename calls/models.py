"""Calls and what happens on them: orders, recordings, callbacks, messages, escalations and bookings.

Every model is org-owned (`objects.for_org(org)`). Rows that the agent runtime creates carry the runtime's
own id (`runtime_call_id`, `runtime_event_id`) under a unique constraint, so a retried request can never
make a second row: the database refuses it, and the service answers with the row that already exists.
"""

from django.conf import settings
from django.contrib.postgres.constraints import ExclusionConstraint
from django.contrib.postgres.fields import DateTimeRangeField, RangeBoundary, RangeOperators
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import Exists, F, OuterRef, Q

from knowledge.models import Calendar, EscalationRule, TeamMember
from orgs.models import Location
from orgs.tenancy import AtLocation, Matching, OrgOwnedModel


class Classification(models.TextChoices):
    REAL_ENGAGEMENT = "real_engagement", "Real engagement"
    ROBOCALL = "robocall", "Robocall"
    AUTOMATED_DIALER = "automated_dialer", "Automated dialer"
    WRONG_NUMBER_HANGUP = "wrong_number_hangup", "Wrong-number hangup"


UNSCORABLE_CLASSIFICATIONS = frozenset(
    {Classification.ROBOCALL, Classification.AUTOMATED_DIALER, Classification.WRONG_NUMBER_HANGUP}
)


def default_redaction() -> dict:
    """A call no detector has read yet (stored before redaction existed): `manage.py redact_stored_calls` reads it."""
    return {"detector_version": None, "counts": {}, "recording_withheld": False}
class ContentDeletedReason(models.TextChoices):
    RETENTION = "retention", "Retention"
    REQUEST = "request", "Request"
    ERASURE = "erasure", "Erasure"


class Call(OrgOwnedModel):
    """One phone call answered by the agent.

    Created by the runtime's call start (status `in_progress`) and filled in by its completion
    (`completed`). `trail` is derived from the call's tool events (see `ToolEvent`) and stored here so
    reads cost nothing. `transcript` is `[{speaker, text, offset_seconds}]`; `quality_checks` is
    `[{name, verdict, evidence[], gap_type, verification}]`; `evidence_marks` is, per turn, where the checks'
    quotes appear (`[[start, end, check]]`, calls/evidence.py), computed once at completion (null: not computed).
    """

    location_rule = AtLocation("location")

    class Status(models.TextChoices):
        IN_PROGRESS = "in_progress", "In progress"
        COMPLETED = "completed", "Completed"
        # No completion within CALL_COMPLETION_TIMEOUT_MINUTES (calls.tasks.abandon_stale_calls); a completion that
        # arrives later still completes the call.
        ABANDONED = "abandoned", "Abandoned"

    class Direction(models.TextChoices):
        INBOUND = "inbound", "Inbound"
        OUTBOUND = "outbound", "Outbound"

    class Disposition(models.TextChoices):
        COMPLETED = "completed", "Completed"
        TRANSFERRED = "transferred", "Transferred"
        ESCALATED = "escalated", "Escalated"

    runtime_call_id = models.CharField(max_length=128)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.IN_PROGRESS)
    location = models.ForeignKey(Location, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    contact = models.ForeignKey("contacts.Contact", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    duration_seconds = models.PositiveIntegerField(null=True, blank=True)
    direction = models.CharField(max_length=16, choices=Direction.choices, default=Direction.INBOUND)
    from_number = models.CharField(max_length=32, null=True, blank=True)
    disposition = models.CharField(max_length=16, choices=Disposition.choices, null=True, blank=True)
    classification = models.CharField(max_length=32, choices=Classification.choices, null=True, blank=True)
    scorable = models.BooleanField(default=False)
    score = models.PositiveSmallIntegerField(null=True, blank=True)
    summary = models.TextField(null=True, blank=True)
    outcome = models.CharField(max_length=64, null=True, blank=True)
    outcome_tags = models.JSONField(default=list, blank=True)
    trail = models.JSONField(default=list, blank=True)
    transcript = models.JSONField(default=list, blank=True)
    quality_checks = models.JSONField(default=list, blank=True)
    evidence_marks = models.JSONField(null=True, blank=True)
    # What the agent knew (from the completion): the knowledge version it answered from, the facts it relied on as
    # [{"id", "label"}] at completion time (a later rename or delete does not rewrite them), and the questions it
    # could not answer.
    knowledge_version = models.PositiveIntegerField(null=True, blank=True)
    facts_used = models.JSONField(default=list, blank=True)
    unanswered_questions = models.JSONField(default=list, blank=True)
    caller_name = models.CharField(max_length=200, null=True, blank=True)
    caller_email = models.CharField(max_length=254, null=True, blank=True)
    # The organization's call fields as the completion reported them, keyed by the field's name at that time:
    # {name: {"label", "type", "value", "evidence", "evidence_verified"}} (calls.call_fields). Stored whole, so a
    # later rename or delete of a field does not rewrite the call; filtered by containment on a GIN index.
    fields = models.JSONField(default=dict, blank=True)
    # What the detector (core.sensitive) replaced in this call's text before it was stored, and whether its
    # recording was withheld for it: {"detector_version", "counts": {kind: n}, "recording_withheld"} (calls.redaction).
    redaction = models.JSONField(default=default_redaction, blank=True)
    # The call's content (calls.services.content: the transcript and every text the caller's words reached) was
    # deleted: when and why. What stays is the tombstone (ids, times, figures), which analytics keep counting.
    content_deleted_at = models.DateTimeField(null=True, blank=True)
    content_deleted_reason = models.CharField(max_length=16, choices=ContentDeletedReason.choices, null=True,
                                              blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "runtime_call_id"], name="uniq_call_runtime_id"),
            models.CheckConstraint(condition=Q(score__isnull=True) | Q(score__lte=100), name="call_score_0_100"),
        ]
        indexes = [
            models.Index(fields=["organization", "-started_at", "-id"], name="call_org_started_idx"),
            models.Index(fields=["organization", "from_number"], name="call_org_from_idx"),
            # The abandon sweep reads only calls still in progress, oldest first.
            models.Index(fields=["started_at"], condition=Q(status="in_progress"), name="call_in_progress_idx"),
            # `?fields.<name>=<value>` is `fields @> {"<name>": {"value": <value>}}`: jsonb_path_ops answers it.
            GinIndex(fields=["fields"], opclasses=["jsonb_path_ops"], name="call_fields_gin"),
            # The retention purge's walk: an organization's calls that still have content, oldest first, so a run
            # never reads the tombstones of earlier runs again; keyset pages by (started_at, id), in index order.
            models.Index(fields=["organization", "started_at", "id"], condition=Q(content_deleted_at__isnull=True),
                         name="call_content_kept_walk"),
        ]

    def __str__(self):
        return f"call {self.pk}"

    @property
    def is_completed(self) -> bool:
        return self.status == self.Status.COMPLETED


class ToolEvent(OrgOwnedModel):
    """One mid-call tool event as the runtime reported it; the idempotency key of every mid-call write.

    `(call, runtime_event_id)` is unique: a retried event finds its row and gets the stored `result` back.
    `label` (caller's perspective, may be empty) feeds the call's trail, in `(offset_seconds, created_at)` order.
    """

    location_rule = AtLocation("call__location")

    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="tool_events")
    runtime_event_id = models.CharField(max_length=128)
    type = models.CharField(max_length=32)
    label = models.CharField(max_length=200, blank=True, default="")
    offset_seconds = models.FloatField(null=True, blank=True)
    result = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["call", "runtime_event_id"], name="uniq_tool_event_runtime_id")]


class OrderStatus(models.TextChoices):
    NEW = "new", "New"
    IN_PROGRESS = "in_progress", "In progress"
    FULFILLED = "fulfilled", "Fulfilled"
    CANCELED = "canceled", "Canceled"


class CancelSource(models.TextChoices):
    TEAM_VIA_DASHBOARD = "team_via_dashboard", "Team via dashboard"
    TEAM_VIA_API = "team_via_api", "Team via API"
    CALLER_VIA_PHONE = "caller_via_phone", "Caller via phone"


# docs/api.md#orders: new -> in_progress | fulfilled | canceled; in_progress -> fulfilled | canceled; the rest final.
ORDER_TRANSITIONS: dict[str, frozenset[str]] = {
    OrderStatus.NEW: frozenset({OrderStatus.IN_PROGRESS, OrderStatus.FULFILLED, OrderStatus.CANCELED}),
    OrderStatus.IN_PROGRESS: frozenset({OrderStatus.FULFILLED, OrderStatus.CANCELED}),
    OrderStatus.FULFILLED: frozenset(),
    OrderStatus.CANCELED: frozenset(),
}


class OrderCounter(models.Model):
    """The last `call_order_number` handed out per organization; incremented under a row lock."""

    organization = models.OneToOneField(
        "orgs.Organization", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    last_number = models.PositiveIntegerField(default=0)

    def __str__(self):
        return f"{self.organization_id}: {self.last_number}"


class Order(OrgOwnedModel):
    """The phone order placed on a call (at most one per call). Fields mirror the order object (docs/api.md#orders).

    `items` is `[{catalog_item_id, name, quantity, modifiers: [{group_id, group_name, option_name,
    price_cents}], answers: [{question_id, prompt, answer}], unit_price_cents, line_total_cents}]`.
    Status changes go through `services.order_set_status`, under `select_for_update`.
    """

    location_rule = AtLocation("call__location")

    call = models.OneToOneField(Call, on_delete=models.CASCADE, related_name="order")
    call_order_number = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=OrderStatus.choices, default=OrderStatus.NEW)
    profile_id = models.UUIDField()
    profile_name = models.CharField(max_length=200)
    items = models.JSONField(default=list)
    order_answers = models.JSONField(default=list)
    subtotal_cents = models.IntegerField()
    total_cents = models.IntegerField()
    fulfillment_estimate_value = models.FloatField()
    fulfillment_estimate_unit = models.CharField(max_length=16)
    fulfillment_estimate_label = models.CharField(max_length=200, null=True, blank=True)
    fulfillment_varies = models.BooleanField(default=False)
    expected_fulfillment_at = models.DateTimeField()
    cancellation_allowed = models.BooleanField(default=True)
    cancellation_window_value = models.FloatField()
    cancellation_window_unit = models.CharField(max_length=16)
    cancellation_deadline_at = models.DateTimeField()
    placed_at = models.DateTimeField()
    canceled_at = models.DateTimeField(null=True, blank=True)
    canceled_by = models.CharField(max_length=32, choices=CancelSource.choices, null=True, blank=True)
    payment_status = models.CharField(max_length=32, null=True, blank=True)
    external_order_id = models.CharField(max_length=200, null=True, blank=True)
    payment_collected_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "call_order_number"], name="uniq_order_number_per_org"),
        ]


class Recording(OrgOwnedModel):
    """A call's audio, stored in the default storage. The row exists only once the upload has finished."""

    location_rule = AtLocation("call__location")

    call = models.OneToOneField(Call, on_delete=models.CASCADE, related_name="recording")
    file = models.FileField(upload_to="recordings/%Y/%m/", max_length=300)
    content_type = models.CharField(max_length=100)
    size_bytes = models.PositiveIntegerField(default=0)
    duration_seconds = models.PositiveIntegerField(null=True, blank=True)
    uploaded_at = models.DateTimeField()


class CallbackRequest(OrgOwnedModel):
    """The caller asked for a human to call back (mid-call; emitted at once, before classification)."""

    location_rule = AtLocation("call__location")

    class Window(models.TextChoices):
        ASAP = "asap", "As soon as possible"
        MORNING = "morning", "Morning"
        AFTERNOON = "afternoon", "Afternoon"
        EVENING = "evening", "Evening"
        CUSTOM = "custom", "Custom"

    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="callback_requests")
    contact = models.ForeignKey("contacts.Contact", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    callback_number = models.CharField(max_length=32, null=True, blank=True)
    requested_window = models.CharField(max_length=16, choices=Window.choices)
    custom_window = models.CharField(max_length=200, null=True, blank=True)
    reason = models.TextField()
    requested_team_member = models.ForeignKey(
        TeamMember, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The team's follow-up, from the dashboard's inbox or the API (services.inbox).
    handled_at = models.DateTimeField(null=True, blank=True)
    handled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Or the API key a client marked it handled with (PATCH /v1/...): one of the two, or neither.
    handled_by_key = models.ForeignKey("orgs.ApiKey", on_delete=models.SET_NULL, null=True, blank=True,
                                       related_name="+")


class Message(OrgOwnedModel):
    """A message the caller left for a team member; `message` is the agent's summary, not a verbatim quote."""

    location_rule = AtLocation("call__location")

    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="messages")
    for_team_member = models.ForeignKey(
        TeamMember, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    for_team_member_name = models.CharField(max_length=200, null=True, blank=True)
    message = models.TextField()
    caller_name = models.CharField(max_length=200, null=True, blank=True)
    callback_number = models.CharField(max_length=32, null=True, blank=True)
    # The team's follow-up, from the dashboard's inbox or the API (services.inbox).
    handled_at = models.DateTimeField(null=True, blank=True)
    handled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Or the API key a client marked it handled with (PATCH /v1/...): one of the two, or neither.
    handled_by_key = models.ForeignKey("orgs.ApiKey", on_delete=models.SET_NULL, null=True, blank=True,
                                       related_name="+")


class Escalation(OrgOwnedModel):
    """An escalation rule matched on a call and the caller was routed to a human."""

    location_rule = AtLocation("call__location")

    class TriggeredBy(models.TextChoices):
        KEYWORD = "keyword", "Keyword"
        LLM_CLASSIFICATION = "llm_classification", "LLM classification"

    call = models.ForeignKey(Call, on_delete=models.CASCADE, related_name="escalations")
    # A deleted rule leaves its escalations, which carry its name.
    rule = models.ForeignKey(EscalationRule, on_delete=models.SET_NULL, null=True, blank=True,
                             related_name="escalations")
    rule_name = models.CharField(max_length=200)
    destination_type = models.CharField(max_length=16, choices=EscalationRule.DestinationType.choices)
    destination_team_member = models.ForeignKey(
        TeamMember, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    destination_phone = models.CharField(max_length=32, null=True, blank=True)
    triggered_by = models.CharField(max_length=32, choices=TriggeredBy.choices)
    context = models.TextField(blank=True, default="")
    # The team's follow-up, from the dashboard's inbox or the API (services.inbox).
    handled_at = models.DateTimeField(null=True, blank=True)
    handled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # Or the API key a client marked it handled with (PATCH /v1/...): one of the two, or neither.
    handled_by_key = models.ForeignKey("orgs.ApiKey", on_delete=models.SET_NULL, null=True, blank=True,
                                       related_name="+")


class TsTzRange(models.Func):
    function = "TSTZRANGE"
    output_field = DateTimeRangeField()


class Booking(OrgOwnedModel):
    """An appointment booked and confirmed during a call. Contact fields are best-effort details from the call."""

    location_rule = AtLocation("location")

    class Status(models.TextChoices):
        CONFIRMED = "confirmed", "Confirmed"
        CANCELED = "canceled", "Canceled"

    # A deleted calendar (one without future confirmed bookings) leaves its past bookings, calendar null.
    calendar = models.ForeignKey(Calendar, on_delete=models.SET_NULL, null=True, blank=True, related_name="bookings")
    call = models.ForeignKey(Call, on_delete=models.SET_NULL, null=True, blank=True, related_name="bookings")
    location = models.ForeignKey(Location, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    contact = models.ForeignKey("contacts.Contact", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    start_at = models.DateTimeField()
    end_at = models.DateTimeField()
    timezone = models.CharField(max_length=64)
    contact_name = models.CharField(max_length=200, null=True, blank=True)
    contact_email = models.CharField(max_length=254, null=True, blank=True)
    contact_phone = models.CharField(max_length=32, null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.CONFIRMED)

    class Meta:
        constraints = [
            # Two confirmed bookings of one calendar never overlap, whatever runs concurrently (btree_gist).
            ExclusionConstraint(
                name="booking_no_overlap",
                expressions=[("calendar", RangeOperators.EQUAL),
                             (TsTzRange("start_at", "end_at", RangeBoundary()), RangeOperators.OVERLAPS)],
                condition=Q(status="confirmed"),
            ),
            models.CheckConstraint(condition=Q(end_at__gt=F("start_at")), name="booking_ends_after_start"),
        ]
        indexes = [models.Index(fields=["organization", "-start_at", "-id"], name="booking_org_start_idx")]


class _RollupKey(models.Model):
    """What the rollups count by: the organization, the local day (in the org's time zone) a call started on, its
    location and its outcome. `location_id` is the call's as it was counted (no foreign key: when a location goes, its
    calls' move to null through the triggers and its rows stay at zero). The organization's foreign key is the
    database's own, ON DELETE CASCADE (calls 0012, 0019): a deleted org's calls are deleted (and subtracted) before the
    org row goes."""

    organization = models.ForeignKey(
        "orgs.Organization", on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    day = models.DateField()
    location_id = models.UUIDField(null=True)
    outcome = models.CharField(max_length=64)

    class Meta:
        abstract = True


class _CallFigures(models.Model):
    calls = models.IntegerField(default=0)
    real_engagements = models.IntegerField(default=0)
    escalations = models.IntegerField(default=0)
    duration_sum = models.BigIntegerField(default=0)
    duration_count = models.IntegerField(default=0)
    score_sum = models.BigIntegerField(default=0)
    score_count = models.IntegerField(default=0)
    bookings = models.IntegerField(default=0)
    orders = models.IntegerField(default=0)
    unanswered_questions = models.IntegerField(default=0)

    class Meta:
        abstract = True

    def __str__(self):
        return f"{self.organization_id} {self.day} {self.location_id} {self.outcome!r}: {self.calls} calls"


class _FieldFigures(models.Model):
    name = models.CharField(max_length=64)
    value_sum = models.FloatField(default=0)  # double precision: integers stay exact up to 2**53
    value_count = models.IntegerField(default=0)

    class Meta:
        abstract = True

    def __str__(self):
        return f"{self.organization_id} {self.day} {self.location_id} {self.outcome!r} {self.name}: {self.value_sum}"


class CallRollup(_RollupKey, _CallFigures):
    """Per organization, local day (in the org's time zone), location and outcome: what its calls add up to, exact at
    every instant.

    Derived data, like an index, and read-only: a view (calls 0019) of CallRollupFolded plus the CallRollupDelta rows
    not folded yet, so the analytics read a few thousand rows for a year instead of a million calls
    (docs/api.md#analytics). PostgreSQL triggers (calls 0012, 0019) append every write to calls, bookings and orders to
    the deltas in the same transaction, and rebuild an organization's rows when its time zone changes. `id` is the
    folded row's (a key with only deltas: minus the first delta's).
    """

    id = models.BigAutoField(primary_key=True)

    class Meta:
        managed = False


class CallRollupFolded(_RollupKey, _CallFigures):
    """CallRollup's figures as far as calls.tasks.fold_rollup has added them up: one row per key, written by the fold
    and by a time zone change's rebuild only, never by a call's write (calls 0019)."""

    id = models.BigAutoField(primary_key=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "day", "location_id", "outcome"], nulls_distinct=False,
                name="uniq_call_rollup_key",
            ),
        ]


class CallRollupDelta(_RollupKey, _CallFigures):
    """What one statement on calls, bookings or orders changed in CallRollup, appended by its trigger in the writer's
    transaction: concurrent writers of one key append rows of their own instead of queueing on that key's row until
    each commits. The fold moves them into CallRollupFolded (calls 0019)."""

    id = models.BigAutoField(primary_key=True)
    organization = models.ForeignKey(
        "orgs.Organization", on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )

    class Meta:
        indexes = [models.Index(fields=["organization", "day"], name="call_rollup_delta_org_day")]


class CallFieldRollup(_RollupKey, _FieldFigures):
    """Beside CallRollup, on the same key plus the field's `name`: the sum and count of a `number` call field's values
    (Call.fields, as each call stored them: `type` number at completion). A view of CallFieldRollupFolded plus
    CallFieldRollupDelta, kept by the same triggers (calls 0013, 0018)."""

    id = models.BigAutoField(primary_key=True)

    class Meta:
        managed = False


class CallFieldRollupFolded(_RollupKey, _FieldFigures):
    """CallFieldRollup's figures as far as the fold has added them up (as CallRollupFolded)."""

    id = models.BigAutoField(primary_key=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "day", "location_id", "outcome", "name"], nulls_distinct=False,
                name="uniq_call_field_rollup_key",
            ),
        ]


class CallFieldRollupDelta(_RollupKey, _FieldFigures):
    """What one statement on calls changed in CallFieldRollup, appended as CallRollupDelta is."""

    id = models.BigAutoField(primary_key=True)
    organization = models.ForeignKey(
        "orgs.Organization", on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )

    class Meta:
        indexes = [models.Index(fields=["organization", "day"], name="call_fieldrollup_delta_org_day")]


# A contact is the organization's, at a location through its calls there: a scoped principal reads and changes the
# contacts with a call at one of its locations (docs/api.md#locations-and-scope). Declared here, above contacts.
contacts_at_locations = Matching(
    lambda location_ids: Q(Exists(Call.objects.filter(contact_id=OuterRef("pk"), location_id__in=location_ids))),
    what="contacts",
)


__all__ = [
    "Booking",
    "Call",
    "CallFieldRollup",
    "CallFieldRollupDelta",
    "CallFieldRollupFolded",
    "CallRollup",
    "CallRollupDelta",
    "CallRollupFolded",
    "CallbackRequest",
    "CancelSource",
    "Classification",
    "ContentDeletedReason",
    "Escalation",
    "Message",
    "Order",
    "OrderCounter",
    "OrderStatus",
    "Recording",
    "ToolEvent",
]
