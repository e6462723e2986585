"""The Alerts page: the organization's alerts, open ones first, each with its rule, a link to the calls behind its
value and an Acknowledge button (alerts.services.alert_acknowledge); one alert's own page is the `alert_url` of
the alert events and e-mails. Every member may acknowledge (the people who act on an alert are not only admins); a
location manager sees its locations' alerts only (`for_org` through its scope)."""

from datetime import timedelta

from django.contrib import messages
from django.db.models import F
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.views.generic import TemplateView, View

from alerts import selectors, services
from alerts.models import Metric
from orgs.models import Location

from ..mixins import OrgMixin

SHOWN = 100
# The calls page's filters that narrow the calls to those a metric counts.
CALL_FILTERS = {Metric.UNANSWERED_QUESTION_RATE: "&unanswered=yes"}


def calls_link(alert) -> str | None:
    """The calls page over the local days of the alert's window, at its location: the calls behind the value (a
    webhook failure rate has none: the Webhooks page is its place)."""
    if alert.metric == Metric.WEBHOOK_FAILURE_RATE:
        return reverse("dashboard:webhooks")
    zone = timezone.get_current_timezone()
    until = timezone.localtime(alert.triggered_at, zone).date()
    since = timezone.localtime(alert.triggered_at - timedelta(minutes=alert.window_minutes), zone).date()
    link = f"{reverse('dashboard:calls')}?since={since.isoformat()}&until={until.isoformat()}"
    if alert.location_id:
        link += f"&location={alert.location_id}"
    return link + CALL_FILTERS.get(alert.metric, "")


def _rows(alerts) -> list[dict]:
    names = dict(Location.objects.filter(pk__in={a.location_id for a in alerts if a.location_id})
                 .values_list("pk", "name"))
    return [{"alert": alert, "rule": alert.rule, "location": names.get(alert.location_id),
             "calls_link": calls_link(alert)} for alert in alerts]


class AlertsView(OrgMixin, TemplateView):
    """Open alerts first, then the newest; at most SHOWN. Three queries whatever the size."""

    template_name = "dashboard/alerts/alerts.html"

    def get_context_data(self, **kwargs):
        rows = selectors.alert_list(org=self.org).select_related("rule").order_by(
            F("resolved_at").asc(nulls_first=True), "-triggered_at", "-id")
        alerts = list(rows[:SHOWN])
        open_count = selectors.alert_list(org=self.org, status="open").count()
        return super().get_context_data(rows=_rows(alerts), open_count=open_count, shown=SHOWN, single=False,
                                        **kwargs)


class AlertDetailView(OrgMixin, TemplateView):
    """One alert (the link in its e-mail and events); another organization's or location's is the 404 page."""

    template_name = "dashboard/alerts/alerts.html"

    def get_context_data(self, **kwargs):
        alert = selectors.alert_get(org=self.org, alert_id=self.kwargs["alert_id"])
        return super().get_context_data(rows=_rows([alert]), open_count=None, shown=SHOWN, single=True, **kwargs)


class AlertAcknowledgeView(OrgMixin, View):
    """POST only: acknowledges one alert as the signed-in user, then back to the Alerts page."""

    http_method_names = ["post"]

    def post(self, request, alert_id):
        alert = selectors.alert_get(org=self.org, alert_id=alert_id)
        already = alert.acknowledged_at is not None
        services.alert_acknowledge(alert=alert, by=request.user.email or request.user.get_username())
        if already:
            messages.info(request, "The alert was already acknowledged.")
        else:
            messages.success(request, "Alert acknowledged.")
        return redirect("dashboard:alerts")
