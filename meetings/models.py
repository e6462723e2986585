"""The meetings product: meetings, their AI-drafted outcomes, and the dispatches of approved outcomes.

A meeting arrives from the meetings runtime with a drafted `Outcome`. An org admin may edit it, approves it,
and dispatches it: each `Dispatch` emits `meeting.outcome_approved` with a `status_url` that carries a token,
and the receiver posts its progress (`acked`, then `done` or `failed`) back to that URL.
"""

from django.conf import settings
from django.db import models

from orgs.tenancy import Nowhere, OrgOwnedModel


class Meeting(OrgOwnedModel):
    """A meeting the runtime listened to. `runtime_meeting_id` is the runtime's own id: posting the same one
    twice gives the same meeting (a unique constraint, so a race cannot make two)."""

    location_rule = Nowhere(what="meetings")

    runtime_meeting_id = models.CharField(max_length=200)
    title = models.CharField(max_length=200, null=True, blank=True)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["organization", "runtime_meeting_id"], name="uniq_meeting_runtime_id")
        ]
        indexes = [models.Index(fields=["organization", "-started_at", "-id"], name="meeting_org_started_idx")]

    def __str__(self):
        return self.title or f"Meeting {self.pk}"


class Outcome(OrgOwnedModel):
    """What a meeting produced, as drafted by the runtime and edited by admins (shapes: meetings.validation).

    `approved_by`/`approved_at` are set by an admin's approval and cleared by any later edit, so what is
    dispatched is always exactly what was approved. After the first dispatch the outcome no longer changes.
    """

    location_rule = Nowhere(what="meetings")

    meeting = models.OneToOneField(Meeting, on_delete=models.CASCADE, related_name="outcome")
    summary = models.TextField()
    tickets = models.JSONField(default=list)
    decisions = models.JSONField(default=list)
    open_questions = models.JSONField(default=list)
    action_items = models.JSONField(default=list)
    schema_version = models.PositiveSmallIntegerField(default=1)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    approved_at = models.DateTimeField(null=True, blank=True)
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    edited_at = models.DateTimeField(null=True, blank=True)

    @property
    def is_approved(self) -> bool:
        return self.approved_at is not None


class Dispatch(OrgOwnedModel):
    """One sending of an approved outcome to the org's subscribers (one `meeting.outcome_approved` event).

    The token of its `status_url` is stored only as a SHA-256 hex digest (it has 256 bits of entropy, so a fast
    hash is enough, as for API keys). The event's body, which must stay byte-identical across retries, is the
    only place the plaintext lives. `state` moves sent -> acked -> done | failed, under a row lock.
    """

    location_rule = Nowhere(what="meetings")

    class State(models.TextChoices):
        SENT = "sent", "Sent"
        ACKED = "acked", "Acknowledged"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    outcome = models.ForeignKey(Outcome, on_delete=models.CASCADE, related_name="dispatches")
    token_digest = models.CharField(max_length=64)
    state = models.CharField(max_length=16, choices=State.choices, default=State.SENT)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    event_id = models.CharField(max_length=40, blank=True, default="")  # the webhooks.Event it emitted

    class Meta:
        indexes = [models.Index(fields=["outcome", "-created_at"], name="dispatch_outcome_created_idx")]

    def __str__(self):
        return f"Dispatch {self.pk} ({self.state})"


class DispatchProgress(OrgOwnedModel):
    """One accepted progress post (a state change) with the receiver's optional detail. Repeats of the
    current state are acknowledged but not recorded, so a receiver's retry does not duplicate history."""

    location_rule = Nowhere(what="meetings")

    dispatch = models.ForeignKey(Dispatch, on_delete=models.CASCADE, related_name="progress")
    from_state = models.CharField(max_length=16, choices=Dispatch.State.choices)
    state = models.CharField(max_length=16, choices=Dispatch.State.choices)
    detail = models.TextField(blank=True, default="")  # <= 5,000 characters, enforced by the service

    class Meta:
        ordering = ["created_at", "id"]
