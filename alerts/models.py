"""Alert rules and the alerts they raise (docs/api.md#alerts).

A rule watches one metric of the organization (or of some of its locations) over a sliding window; the evaluation
task (alerts.tasks.evaluate) reads the metric every minute from indexes that already exist and opens an `Alert` when
the rule's condition holds, then resolves it once the metric has been back within the threshold for a whole window.
The evaluation's state is the alerts themselves: the open one of a (rule, location) pair (at most one: a unique
constraint), its `clear_since`, and the latest `triggered_at` for the cooldown.
"""

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q

from orgs.tenancy import AtLocation, LocationRule, OrgOwnedModel


class Metric(models.TextChoices):
    CALLS = "calls", "Calls"
    ABANDONED_CALLS = "abandoned_calls", "Abandoned calls"
    CALLBACKS_WAITING = "callbacks_waiting", "Callbacks waiting"
    ESCALATIONS_WAITING = "escalations_waiting", "Escalations waiting"
    UNANSWERED_QUESTION_RATE = "unanswered_question_rate", "Unanswered question rate"
    WEBHOOK_FAILURE_RATE = "webhook_failure_rate", "Webhook failure rate"
    LINE_SILENT = "line_silent", "Line silent"


class Comparator(models.TextChoices):
    GT = "gt", "greater than"
    LT = "lt", "less than"


class Channel(models.TextChoices):
    EMAIL = "email", "E-mail"
    WEBHOOK = "webhook", "Webhook"


class RulesWithinScope(LocationRule):
    """A principal limited to locations sees and changes the rules whose locations are all its own: an
    organization-wide rule (null) is another principal's, as an organization-wide webhook subscription is."""

    what = "organization-wide alert rules"

    def visible(self, location_ids):
        return Q(location_ids__contained_by=list(location_ids))  # null (the whole organization): never

    def writable(self, row, location_ids):
        return row.location_ids is not None and set(row.location_ids) <= location_ids


class AlertRule(OrgOwnedModel):
    """What to watch and when to tell: `metric` `comparator` `threshold` over the last `window_minutes`, for the
    locations in `location_ids` (one alert per location) or, null, the organization as a whole (`line_silent`:
    each of its locations). `min_calls` gates the rates (a window with fewer calls or attempts is not judged) and is
    the calls `line_silent` must have expected. Validated by alerts.services; at most QUOTA_ALERT_RULES_PER_ORG."""

    location_rule = RulesWithinScope()

    name = models.CharField(max_length=200)
    metric = models.CharField(max_length=32, choices=Metric.choices)
    location_ids = ArrayField(models.UUIDField(), null=True, blank=True)
    comparator = models.CharField(max_length=2, choices=Comparator.choices)
    threshold = models.FloatField()
    window_minutes = models.PositiveIntegerField()
    min_calls = models.PositiveIntegerField(default=1)
    cooldown_minutes = models.PositiveIntegerField(default=60)
    channels = ArrayField(models.CharField(max_length=16), default=list, blank=True)
    only_during_open_hours = models.BooleanField(default=False)
    enabled = models.BooleanField(default=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "name"], name="uniq_alert_rule_name_per_org")]
        indexes = [
            models.Index(fields=["organization", "-created_at", "-id"], name="alert_rule_org_created_idx"),
            # The evaluation reads every enabled rule, grouped by organization.
            models.Index(fields=["organization"], condition=Q(enabled=True), name="alert_rule_enabled_idx"),
        ]

    def __str__(self):
        return self.name


class Alert(OrgOwnedModel):
    """One time a rule's condition held, for one location (null: the organization as a whole): open until
    `resolved_at`. `value` is the metric when it fired (`line_silent`: the calls that came, 0) and `threshold` the
    rule's then (`line_silent`: the calls expected). `clear_since` is when the metric last came back within the
    threshold (None while it is not): the alert resolves a whole window later."""

    location_rule = AtLocation("location", what="organization-wide alerts")

    rule = models.ForeignKey(AlertRule, on_delete=models.SET_NULL, null=True, blank=True, related_name="alerts")
    location = models.ForeignKey("orgs.Location", on_delete=models.SET_NULL, null=True, blank=True,
                                 related_name="+")
    metric = models.CharField(max_length=32, choices=Metric.choices)
    value = models.FloatField()
    threshold = models.FloatField()
    window_minutes = models.PositiveIntegerField()
    triggered_at = models.DateTimeField()
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.CharField(max_length=300, null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    clear_since = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # One open alert per rule and location: a second evaluation running at once cannot open another.
            models.UniqueConstraint(fields=["rule", "location"], condition=Q(resolved_at__isnull=True),
                                    nulls_distinct=False, name="uniq_open_alert_per_rule_location"),
        ]
        indexes = [
            models.Index(fields=["organization", "-created_at", "-id"], name="alert_org_created_idx"),
            # The cooldown: a rule's latest alert at a location.
            models.Index(fields=["rule", "location", "-triggered_at"], name="alert_rule_latest_idx"),
        ]

    def __str__(self):
        return f"{self.metric} alert {self.pk}"
