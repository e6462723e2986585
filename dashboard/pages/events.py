"""Events: everything the organization's systems were sent or could have been (the last 30 days), filtered by type,
day and call, each with its body and its deliveries; and the call page's "Sent to your systems" panel."""

import json
from datetime import timedelta

from django import forms
from django.core.paginator import Paginator
from django.views.generic import TemplateView

from calls.models import Call
from webhooks import feed
from webhooks.models import EVENT_TYPES, Subscription

from ..forms import DayRangeForm
from ..mixins import OrgMixin

PAGE_SIZE = 25


class EventFilterForm(DayRangeForm):
    type = forms.ChoiceField(label="Type", required=False, choices=[("", "All types"), *((t, t) for t in EVENT_TYPES)])
    call = forms.UUIDField(label="Call id", required=False)

    def feed_filters(self) -> dict:
        """`feed.event_feed` keyword arguments: whole UTC days (the feed's `until` is inclusive)."""
        since, next_day = self.day_bounds()
        return {
            "type": self.cleaned_data.get("type") or None,
            "since": since,
            "until": next_day - timedelta(microseconds=1) if next_day else None,
            "call_id": self.cleaned_data.get("call"),
        }


def _row(event) -> dict:
    return {
        "event": event,
        "body": json.dumps(feed.envelope(event), indent=2, ensure_ascii=False),
        "deliveries": event.delivery_list,
    }


class EventListView(OrgMixin, TemplateView):
    """Newest first, 25 a page, two queries a page (the events, their deliveries with their subscriptions)."""

    template_name = "dashboard/events/list.html"

    def get_context_data(self, **kwargs):
        params = self.request.GET.copy()
        params.pop("page", None)
        form = EventFilterForm(params or None)
        page, rows = None, []
        if not form.is_bound or form.is_valid():
            filters = form.feed_filters() if form.is_bound else {}
            events = feed.with_deliveries(feed.event_feed(org=self.org, **filters), org=self.org)
            events = events.order_by("-created_at", "-id")
            page = Paginator(events, PAGE_SIZE).get_page(self.request.GET.get("page"))
            rows = [_row(event) for event in page.object_list]
        return super().get_context_data(
            form=form, page=page, rows=rows, filtered=form.is_bound, querystring=params.urlencode(), **kwargs
        )


def call_panel(org, call: Call) -> dict:
    """The call page's "Sent to your systems": each event of the call with its deliveries and, when it has no
    call.ended, why (the call is still going, it was unscorable, or its events have expired)."""
    events = feed.call_trace(org=org, call_id=call.pk)
    reason = None
    if not any(event.type == "call.ended" for event in events):
        if not call.is_completed:
            reason = "The call is still in progress: call.ended is sent when it ends."
        elif not call.scorable:
            reason = (f"This call was classified as {call.get_classification_display().lower()}: unscorable calls "
                      "send no call.ended and no follow-up events.")
        elif not events:
            reason = "No event of this call is kept any more: events are kept 30 days."
    # Those that would receive this call's call.ended: at its location (or the whole organization's), and for a
    # member limited to locations, of the subscriptions they see.
    receiving = Subscription.objects.for_org(org).filter(
        Subscription.covering(call.location_id), enabled=True, events__contains=["call.ended"]).exists()
    return {"events": [_row(event) for event in events], "reason": reason, "no_subscription": not receiving,
            "located": call.location_id is not None}
