"""Settings → Webhooks: subscriptions with their health, create, edit, enable or disable, rotate the secret,
delete, and each subscription's delivery log with a redeliver button.

Members read the list and the logs; every write is admin-only (`admin_methods`), through `webhooks.services`.
A new or rotated secret is stashed in the session (once.py) and shown once on `webhook-secret`; the
subscription itself only ever shows `secret_preview`.
"""

from datetime import datetime

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.generic import FormView, TemplateView, View

from core.errors import Conflict, NotFound, ValidationFailed
from core.timefmt import DAY_RANGE_ERROR, supported_day
from knowledge import selectors as knowledge_selectors
from orgs.tenancy import get_for_org
from webhooks import probe, quotas, replay, selectors, services
from webhooks.models import EVENT_TYPES, Delivery, Subscription

from .. import once
from ..forms import BoundedIntegerField, DashboardForm
from ..mixins import AdminRequiredMixin, OrgMixin

WEBHOOK_SECRET = "webhook_secret"  # the kind of secret stashed in once.py
LOG_PAGE_SIZE = 20
TEST_RESULT = "webhook_test_result"  # the session key of the last test's verdict, shown once on the detail page


class WebhookForm(DashboardForm):
    url = forms.CharField(
        label="Endpoint URL", max_length=2048,
        help_text="An https:// address on the public internet that answers 2xx within 15 seconds.",
        widget=forms.URLInput(attrs={"placeholder": "https://example.com/webhooks/voice-agent", "autocomplete": "off"}),
    )
    events = forms.MultipleChoiceField(
        label="Events to send", widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one event type."},
    )
    description = forms.CharField(max_length=5000, required=False, widget=forms.Textarea(attrs={"rows": 2}))
    rate_limit_per_second = BoundedIntegerField(
        label="Rate limit (deliveries per second)", required=False, min_value=1, max_value=1000,
        help_text="Optional, 1 to 1,000: this endpoint never gets more than that. Empty: no limit.",
    )

    location_ids = forms.MultipleChoiceField(
        label="Locations", required=False, widget=forms.CheckboxSelectMultiple,
        help_text="Only the events of calls and bookings at these locations. None ticked: every event of the "
        "organization, those of no location included.",
    )

    def __init__(self, *args, locations=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["events"].choices = [(event, event) for event in EVENT_TYPES]
        self.fields["location_ids"].choices = [(str(location.pk), location.name) for location in locations]

    def clean_location_ids(self):
        return self.cleaned_data["location_ids"] or None  # none ticked: the whole organization


class WebhookFormMixin:
    template_name = "dashboard/webhooks/form.html"
    form_class = WebhookForm

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(),
                "locations": knowledge_selectors.location_list(org=self.org).order_by("name", "id")}


class WebhookRotateForm(DashboardForm):
    grace_period_seconds = forms.TypedChoiceField(
        label="The old secret",
        coerce=int,
        choices=[
            (0, "Stops signing now"),
            (3600, "Also signs for 1 hour"),
            (86400, "Also signs for 24 hours"),
        ],
        initial=0,
        widget=forms.RadioSelect,
        help_text="During a grace period every delivery carries two signatures, so your receiver can switch "
        "to the new secret without missing one.",
    )



class WebhookListView(OrgMixin, TemplateView):
    template_name = "dashboard/webhooks/list.html"

    def get_context_data(self, **kwargs):
        return super().get_context_data(subscriptions=selectors.subscription_list_with_health(self.org), **kwargs)


class WebhookCreateView(WebhookFormMixin, AdminRequiredMixin, FormView):
    def form_valid(self, form):
        with form.service_errors():
            subscription, secret = services.subscription_create(org=self.org, **form.cleaned_data)
        if form.errors:
            return self.form_invalid(form)
        once.stash(self.request, WEBHOOK_SECRET, subscription_id=str(subscription.pk), plaintext=secret,
                   action="created")
        return redirect("dashboard:webhook-secret")


class WebhookSecretView(once.ShowOnceMixin, AdminRequiredMixin, TemplateView):
    """Shows a new (or rotated) signing secret exactly once (once.py)."""

    template_name = "dashboard/webhooks/secret.html"
    once_kind = WEBHOOK_SECRET
    once_gone_message = "A signing secret is shown only once. Rotate the secret to get a new one."
    once_gone_url = "dashboard:webhooks"

    def get_once_context(self, pending):
        try:
            subscription = selectors.subscription_get(org=self.org, subscription_id=pending["subscription_id"])
        except NotFound:
            return None  # deleted since: the secret is not shown
        return {"subscription": subscription, "action": pending.get("action", "created")}


class SubscriptionMixin(AdminRequiredMixin):
    def get_subscription(self) -> Subscription:
        if not hasattr(self, "_subscription"):
            self._subscription = get_for_org(Subscription, self.org, self.kwargs["subscription_id"])
        return self._subscription

    def get_context_data(self, **kwargs):
        return super().get_context_data(subscription=self.get_subscription(), **kwargs)


class WebhookDetailView(SubscriptionMixin, TemplateView):
    """The subscription, its health, and its delivery log (newest first, paginated), each with its attempts."""

    template_name = "dashboard/webhooks/detail.html"
    admin_methods = ("POST",)
    http_method_names = ["get"]

    def get_context_data(self, **kwargs):
        subscription = self.get_subscription()
        health = selectors.subscription_get_with_health(org=self.org, subscription_id=subscription.pk)
        deliveries = selectors.delivery_log(subscription).order_by("-created_at", "-id")
        page = Paginator(deliveries, LOG_PAGE_SIZE).get_page(self.request.GET.get("page"))
        test = self.request.session.pop(TEST_RESULT, None)
        if test and test.get("subscription_id") != str(subscription.pk):
            test = None
        locations = None if subscription.location_ids is None else list(
            knowledge_selectors.location_list(org=self.org).filter(pk__in=subscription.location_ids).order_by("name"))
        return super().get_context_data(
            health=health, page=page, deliveries=page.object_list, now=timezone.now(), event_types=EVENT_TYPES,
            test=test, stats=selectors.subscription_stats(subscription), locations=locations, **kwargs
        )


class WebhookEditView(WebhookFormMixin, SubscriptionMixin, FormView):
    def get_initial(self):
        subscription = self.get_subscription()
        return {"url": subscription.url, "events": subscription.events, "description": subscription.description,
                "rate_limit_per_second": subscription.rate_limit_per_second,
                "location_ids": [str(pk) for pk in subscription.location_ids or ()]}

    def form_valid(self, form):
        subscription = self.get_subscription()
        changes = {field: form.cleaned_data[field] for field in form.changed_data}
        if not changes:
            messages.info(self.request, "Nothing to save: no field changed.")
            return redirect("dashboard:webhook-detail", subscription_id=subscription.pk)
        with form.service_errors():
            services.subscription_update(subscription=subscription, **changes)
        if form.errors:
            return self.form_invalid(form)
        messages.success(self.request, "Subscription saved.")
        return redirect("dashboard:webhook-detail", subscription_id=subscription.pk)


class WebhookEnabledView(SubscriptionMixin, View):
    """POST `enabled=1|0`: turns delivery on or off. Enabling clears a disabled reason (e.g. after 5 days of
    failures); deliveries missed while disabled are not sent again by this."""

    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        subscription = self.get_subscription()
        enabled = request.POST.get("enabled") == "1"
        services.subscription_update(subscription=subscription, enabled=enabled)
        if enabled:
            messages.success(request, f"Deliveries to {subscription.url} are on again.")
        else:
            messages.success(
                request,
                f"Deliveries to {subscription.url} are paused. Events meanwhile are kept: after enabling it again, "
                "Replay sends what it missed.",
            )
        if request.POST.get("next") == "detail":
            return redirect("dashboard:webhook-detail", subscription_id=subscription.pk)
        return redirect("dashboard:webhooks")


class WebhookRotateView(SubscriptionMixin, FormView):
    template_name = "dashboard/webhooks/rotate.html"
    form_class = WebhookRotateForm

    def form_valid(self, form):
        subscription = self.get_subscription()
        with form.service_errors():
            subscription, secret = services.subscription_rotate_secret(
                subscription=subscription, grace_period_seconds=form.cleaned_data["grace_period_seconds"]
            )
        if form.errors:
            return self.form_invalid(form)
        once.stash(self.request, WEBHOOK_SECRET, subscription_id=str(subscription.pk), plaintext=secret,
                   action="rotated")
        return redirect("dashboard:webhook-secret")


class WebhookDeleteView(SubscriptionMixin, TemplateView):
    """GET asks for confirmation; POST deletes the subscription with its deliveries and their log."""

    template_name = "dashboard/webhooks/delete.html"

    def post(self, request, *args, **kwargs):
        subscription = self.get_subscription()
        services.subscription_delete(subscription=subscription)
        messages.success(request, f"Subscription to {subscription.url} deleted. It receives no more events.")
        return redirect("dashboard:webhooks")


class WebhookRedeliverView(SubscriptionMixin, View):
    """POST: one more attempt of one delivery, now (`delivery_retry`, trigger "manual")."""

    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        subscription = self.get_subscription()
        deliveries = Delivery.objects.filter(subscription=subscription).select_related("event")
        delivery = get_for_org(deliveries, self.org, self.kwargs["delivery_id"])
        try:
            services.delivery_retry(delivery=delivery)
        except Conflict as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"{delivery.event.type} ({delivery.event_id}) is queued for redelivery now.")
        back = request.POST.get("next", "")
        if back and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
            return redirect(back)  # the call page's "Sent to your systems" panel
        return redirect("dashboard:webhook-detail", subscription_id=subscription.pk)


class WebhookTestView(SubscriptionMixin, View):
    """POST `type`: a test delivery and the receiver's verdict (webhooks.probe), shown once on the detail page."""

    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        subscription = self.get_subscription()
        event_type = request.POST.get("type") or "call.ended"
        if event_type not in EVENT_TYPES:
            messages.error(request, "Choose one of the event types.")
        elif (wait := probe.take_test_slot(subscription)) is not None:
            messages.error(request, f"10 tests a minute per endpoint: try again in {wait} s.")
        else:
            try:
                result = probe.send_test(subscription=subscription, event_type=event_type)
            except probe.TestsBusy as busy:
                who = "Your organization has a test running" if busy.scope == "organization" else (
                    "Too many tests are running right now")
                messages.error(request, f"{who}: try again in {busy.wait} s.")
            else:
                request.session[TEST_RESULT] = {"subscription_id": str(subscription.pk), "type": event_type,
                                                **result}
        return redirect("dashboard:webhook-detail", subscription_id=subscription.pk)


def _local(value: str):
    """A `datetime-local` input, read in the organization's zone (the page's), or None when empty; ValueError when
    unreadable."""
    if not value:
        return None
    when = datetime.fromisoformat(value).replace(tzinfo=timezone.get_current_timezone())
    if not supported_day(when):  # the range arithmetic would overflow near the calendar's ends
        raise ValueError(DAY_RANGE_ERROR)
    return when


class WebhookReplayView(SubscriptionMixin, View):
    """POST `since` (and `until`): replays what the endpoint missed in that range (webhooks.replay)."""

    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        subscription = self.get_subscription()
        try:
            since, until = _local(request.POST.get("since", "")), _local(request.POST.get("until", ""))
        except ValueError:
            since = until = None
        if since is None:
            messages.error(request, "Give the time to replay from.")
            return redirect("dashboard:webhook-detail", subscription_id=subscription.pk)
        try:
            queued = replay.subscription_replay(subscription=subscription, since=since, until=until)
        except ValidationFailed as exc:
            for field, errors in exc.details["fieldErrors"].items():
                messages.error(request, f"{field.capitalize()}: {' '.join(errors)}")
        except (Conflict, quotas.ReplayQuotaReached) as exc:
            messages.error(request, exc.message)
        else:
            messages.success(
                request, f"{queued} event{'s' if queued != 1 else ''} queued for {subscription.url}."
                if queued else "Nothing to replay: every event in that range was delivered or is on its way."
            )
        return redirect("dashboard:webhook-detail", subscription_id=subscription.pk)
