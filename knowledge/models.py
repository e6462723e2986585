"""What the agent runtime reads under one `knowledge_version`: facts, team members, escalation rules, calendars and
call fields, and (through knowledge.services) the locations of orgs.models.

Every write goes through knowledge.services, which bumps `Organization.knowledge_version` in the same transaction.
The tables keep the names they had in the apps these models came from (orgs, calls): the move changed no row.
"""

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Exists, OuterRef, Q

from orgs.models import Location, Membership
from orgs.tenancy import AtAnyOf, AtLocation, OrgOwnedModel, ReadOnlyWithin


class Fact(OrgOwnedModel):
    """One entry of the knowledge base the agent answers from; optionally specific to one location.

    `label` is unique per location, and among the org's facts without a location: a location manager never meets
    another location's labels (a 409 would tell it they exist).
    """

    location_rule = AtLocation("location", shared_when_null=True, what="facts without a location")

    label = models.CharField(max_length=200)
    content = models.TextField()  # <= 10,000 characters, enforced by the services and the API
    location = models.ForeignKey(Location, on_delete=models.SET_NULL, null=True, blank=True, related_name="facts")

    class Meta:
        db_table = "orgs_fact"
        constraints = [models.UniqueConstraint(fields=["organization", "location", "label"], nulls_distinct=False,
                                               name="uniq_fact_label_per_location")]
        indexes = [models.Index(fields=["organization", "-created_at", "-id"], name="fact_org_created_idx")]

    def __str__(self):
        return self.label


class TeamMember(OrgOwnedModel):
    """A person calls can be routed to, or messages taken for.

    One linked to a dashboard login (`user`) is a platform user: the API may read it but not change it.
    """

    location_rule = ReadOnlyWithin(lambda ids: _attached_team_members(ids), what="team members")

    name = models.CharField(max_length=200)
    email = models.EmailField(max_length=254, null=True, blank=True)
    phone_number = models.CharField(max_length=32, null=True, blank=True)
    role = models.CharField(max_length=200, null=True, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        db_table = "orgs_teammember"
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "user"], condition=models.Q(user__isnull=False), name="uniq_team_member_user"
            )
        ]
        indexes = [models.Index(fields=["organization", "-created_at", "-id"], name="team_member_org_created_idx")]

    def __str__(self):
        return self.name

    @property
    def is_platform_user(self) -> bool:
        return self.user_id is not None


def _attached_team_members(location_ids) -> Q:
    """The team members of these locations: those an escalation rule of one of them routes to, and the platform users
    whose membership is limited to one of them."""
    return Q(Exists(EscalationRule.objects.filter(destination_team_member=OuterRef("pk"),
                                                  location_id__in=location_ids))) | Q(
        Exists(Membership.objects.filter(organization=OuterRef("organization"), user=OuterRef("user"),
                                         location_ids__overlap=list(location_ids))))


class EscalationRule(OrgOwnedModel):
    """When to hand the caller to a human, and to whom. Served to the runtime with the knowledge."""

    location_rule = AtLocation("location", shared_when_null=True, what="escalation rules without a location")

    class DestinationType(models.TextChoices):
        TEAM_MEMBER = "team_member", "Team member"
        PHONE = "phone", "Phone"

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    keywords = models.JSONField(default=list, blank=True)
    destination_type = models.CharField(max_length=16, choices=DestinationType.choices)
    # PROTECT: a team member who is a rule's destination cannot be deleted (409 naming the rules, services).
    destination_team_member = models.ForeignKey(
        TeamMember, on_delete=models.PROTECT, null=True, blank=True, related_name="escalation_rules"
    )
    destination_phone = models.CharField(max_length=32, null=True, blank=True)
    location = models.ForeignKey(Location, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    enabled = models.BooleanField(default=True)

    class Meta:
        db_table = "calls_escalationrule"
        # Per location (and among the location-less ones), as facts' labels.
        constraints = [models.UniqueConstraint(fields=["organization", "location", "name"], nulls_distinct=False,
                                               name="uniq_escalation_rule_name_per_location")]


class Calendar(OrgOwnedModel):
    """A bookable calendar (per location, optionally). Served to the runtime with the knowledge; its free slots
    and bookings are the calls app's (calls.availability, calls.services.bookings)."""

    location_rule = AtLocation("location", shared_when_null=True, what="calendars without a location")

    name = models.CharField(max_length=200)
    location = models.ForeignKey(Location, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    timezone = models.CharField(max_length=64, default="UTC")
    slot_minutes = models.PositiveIntegerField(default=30)
    # [{"day": "mon".."sun", "start": "HH:MM", "end": "HH:MM"}], local times in `timezone` (knowledge.weekly_hours).
    weekly_hours = models.JSONField(default=list, blank=True)

    class Meta:
        db_table = "calls_calendar"
        # Per location (and among the location-less ones), as facts' labels.
        constraints = [models.UniqueConstraint(fields=["organization", "location", "name"], nulls_distinct=False,
                                               name="uniq_calendar_name_per_location")]


class CallField(OrgOwnedModel):
    """Something the organization wants pulled out of each call (`party_size`, `reservation_date`): the agent is
    told to listen for it (`description`) and the call completion reports its value, stored on the call.

    `name` is a slug; two fields may share it when their locations do not meet (knowledge.services
    `_refuse_call_field_overlap`, under the organization's row lock: no constraint can compare the lists), so at
    most one definition of a name applies to any call. `choices` is non-empty only for `enum`; `location_ids` null
    means every location, else the field applies to calls of those locations only (an id leaves the list when its
    location is deleted; an emptied list applies nowhere). A call keeps the name, label and value it was stored
    with: renaming or deleting a field never rewrites past calls.
    """

    location_rule = AtAnyOf("location_ids", what="call fields of other or all locations")

    class Type(models.TextChoices):
        STRING = "string", "Text"
        NUMBER = "number", "Number"
        BOOLEAN = "boolean", "Yes / no"
        DATE = "date", "Date"
        ENUM = "enum", "One of a list"

    name = models.CharField(max_length=64)
    label = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")  # <= 1,000 characters, enforced by the services
    type = models.CharField(max_length=16, choices=Type.choices)
    choices = models.JSONField(default=list, blank=True)
    required = models.BooleanField(default=False)
    location_ids = ArrayField(models.UUIDField(), null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["organization", "-created_at", "-id"], name="call_field_org_created_idx"),
            models.Index(fields=["organization", "name"], name="call_field_org_name_idx"),
        ]

    def __str__(self):
        return self.name
