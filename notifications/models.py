"""Who is told about what (`NotificationRecipient`), and the e-mail outbox (`EmailNotification`).

A recipient is a team member (mailed at the member's current e-mail) or a plain e-mail address, with the kinds
of notification it gets. Every e-mail to send is one `EmailNotification` row, written in the same transaction as
the change it tells about, with its subject and bodies rendered then (fixed once, like a webhook event's bytes).
A Celery task sends a row under its lock and marks it sent in the same transaction, so a retry never mails twice.
"""

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower

from orgs.tenancy import OrgOwnedModel, Unlocated


class Kind(models.TextChoices):
    """What a notification is about. The values are also `NotificationRecipient`'s boolean field names."""

    CALLBACK_REQUESTS = "callback_requests", "Callback requests"
    MESSAGES = "messages", "Messages"
    ESCALATIONS = "escalations", "Escalations"
    WEBHOOK_PROBLEMS = "webhook_problems", "Webhook problems"
    ALERTS = "alerts", "Alerts"
    # Sent to the invited address only; nobody subscribes to it, so it is not a recipient's field.
    INVITATIONS = "invitations", "Invitations"
    # A dashboard account's own mail (belonging to no organization, so no organization's list shows it): a password
    # reset link (resolved to its account by the worker, see notifications.sender) and the notice of repeated
    # failed log-ins.
    PASSWORD_RESET = "password_reset", "Password reset"
    ACCOUNT_LOCKED = "account_locked", "Failed log-ins"


# The kinds a recipient chooses, each a boolean field of NotificationRecipient.
KIND_FIELDS = (Kind.CALLBACK_REQUESTS, Kind.MESSAGES, Kind.ESCALATIONS, Kind.WEBHOOK_PROBLEMS, Kind.ALERTS)


class NotificationRecipient(OrgOwnedModel):
    """One person or address the org's notification e-mails go to, and which kinds each one gets.

    Exactly one of `team_member` (its e-mail is read at send time, so an edited address is followed) and `email`
    is set (a check constraint). One row per team member and per address (case-insensitive) in an org: the
    services turn a clash into Conflict. Deleting the team member deletes the recipient.
    """

    location_rule = Unlocated()

    team_member = models.ForeignKey(
        "knowledge.TeamMember", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    email = models.EmailField(max_length=254, null=True, blank=True)
    callback_requests = models.BooleanField(default=False)
    messages = models.BooleanField(default=False)
    escalations = models.BooleanField(default=False)
    webhook_problems = models.BooleanField(default=False)
    alerts = models.BooleanField(default=False)
    # The locations (knowledge.Location ids: that app sits above this one) this recipient hears about; null: the
    # whole organization. A limited recipient (a location manager) gets the mail about things at those locations
    # only, never about the organization as a whole (a location-less call, a webhook problem, an org-wide alert).
    location_ids = ArrayField(models.UUIDField(), null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(Q(team_member__isnull=False) & Q(email__isnull=True))
                | (Q(team_member__isnull=True) & Q(email__isnull=False)),
                name="notification_recipient_member_xor_email",
            ),
            models.UniqueConstraint(
                fields=["organization", "team_member"], condition=Q(team_member__isnull=False),
                name="uniq_notification_recipient_member",
            ),
            models.UniqueConstraint(
                "organization", Lower("email"), condition=Q(email__isnull=False),
                name="uniq_notification_recipient_email",
            ),
        ]
        indexes = [models.Index(fields=["organization", "created_at"], name="notif_recipient_org_idx")]

    def __str__(self):
        return self.address or "(no e-mail)"

    @property
    def address(self) -> str | None:
        """Where this recipient's mail goes now; None for a team member without an e-mail."""
        return self.team_member.email if self.team_member_id else self.email

    @property
    def kinds(self) -> list[str]:
        return [kind for kind in KIND_FIELDS if getattr(self, kind)]

    @property
    def kind_labels(self) -> list[str]:
        return [Kind(kind).label for kind in self.kinds]


class EmailNotification(OrgOwnedModel):
    """One e-mail to one address about one thing: the outbox row the `notifications.send` task works on.

    `source` names the thing (`callback_request:<id>`, `message:<id>`, ...); (org, source, to_email) is unique,
    so one thing never mails one address twice. `pending` rows are due at `next_attempt_at`; a failed try
    schedules the next one there (the beat sweep enqueues it) until the attempts run out (`failed`).
    """

    location_rule = Unlocated()

    # Null for an account's own mail (Kind.PASSWORD_RESET, Kind.ACCOUNT_LOCKED), which belongs to no organization.
    organization = models.ForeignKey(
        "orgs.Organization", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"

    kind = models.CharField(max_length=32, choices=Kind.choices)
    source = models.CharField(max_length=200)
    # The call the mail is about, by id: calls sit above notifications, so no relation points up to them (the layout
    # test holds it); calls.services.content empties the bodies of a call's mails by this column.
    call_id = models.UUIDField(null=True, blank=True, db_index=True)
    to_email = models.CharField(max_length=254)
    subject = models.CharField(max_length=300)
    body_text = models.TextField()
    body_html = models.TextField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # When a send task was last put on the broker; the sweep leaves recently enqueued rows alone.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "source", "to_email"], name="uniq_email_notification_per_recipient",
                nulls_distinct=False,  # an account's mail (no organization) is one row per source and address too
            ),
        ]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="email_notif_due_idx"),
        ]

    def __str__(self):
        return f"{self.kind} to {self.to_email} ({self.status})"
