"""Bookings: every member sees the org's bookings (upcoming first, then past; filters calendar, location, status,
dates) and cancels one through `calls.services.bookings.booking_cancel`, the service /v1/bookings uses."""

from zoneinfo import ZoneInfo

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import View
from django.views.generic import TemplateView

from calls.exports import BOOKING_COLUMNS
from calls.models import Booking
from calls.selectors import booking_list
from calls.services.bookings import booking_cancel
from knowledge import selectors as knowledge_selectors
from orgs.tenancy import get_for_org

from ..downloads import csv_download, fix_filters
from ..forms import DayRangeForm
from ..mixins import OrgMixin

PAGE_SIZE = 25


class BookingFilterForm(DayRangeForm):
    calendar = forms.ChoiceField(label="Calendar", required=False)
    location = forms.ChoiceField(label="Location", required=False)
    status = forms.ChoiceField(label="Status", required=False, choices=[("", "Any"), ("confirmed", "Confirmed"),
                                                                         ("canceled", "Canceled")])

    def __init__(self, *args, calendars=(), locations=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["calendar"].choices = [("", "All calendars")] + [(str(c.pk), c.name) for c in calendars]
        self.fields["location"].choices = [("", "All locations")] + [(str(loc.pk), loc.name) for loc in locations]

    def selector_filters(self) -> dict:
        """`booking_list` keyword arguments: none unless bound and valid; whole days, `until` included."""
        if not self.is_bound or not self.is_valid():
            return {}
        data = self.cleaned_data
        since, before = self.day_bounds()
        return {"calendar_id": data.get("calendar") or None, "location_id": data.get("location") or None,
                "status": data.get("status") or None, "since": since, "before": before}



def booking_filter_form(org, params) -> BookingFilterForm:
    """The list's filters as `params` set them (the page's `page` aside): the page and its export read them alike."""
    params = params.copy()
    params.pop("page", None)
    return BookingFilterForm(
        params or None,
        calendars=knowledge_selectors.calendar_list(org=org).order_by("name"),
        locations=knowledge_selectors.location_list(org=org).order_by("name"),
    )


class BookingListView(OrgMixin, TemplateView):
    template_name = "dashboard/bookings/list.html"

    def get_context_data(self, **kwargs):
        form = booking_filter_form(self.org, self.request.GET)
        rows = booking_list(org=self.org, **form.selector_filters())
        if form.is_bound and not form.is_valid():
            rows = rows.none()
        rows = rows.select_related("calendar", "location", "call")
        now = timezone.now()
        upcoming = list(rows.filter(end_at__gt=now).order_by("start_at", "id")[:200])
        page = Paginator(rows.filter(end_at__lte=now).order_by("-start_at", "-id"), PAGE_SIZE).get_page(
            self.request.GET.get("page"))
        params = self.request.GET.copy()
        params.pop("page", None)
        return super().get_context_data(form=form, upcoming=upcoming, past=page, page=page,
                                        filtered=form.is_bound, querystring=params.urlencode(), **kwargs)


class BookingExportView(OrgMixin, View):
    """The list's bookings for its current filters as CSV, latest start first (calls/exports.py's columns)."""

    def get(self, request, *args, **kwargs):
        form = booking_filter_form(self.org, request.GET)
        if form.is_bound and not form.is_valid():
            return fix_filters("bookings")
        rows = booking_list(org=self.org, **form.selector_filters()).order_by("-start_at", "-id")
        return csv_download(request, self.org, "bookings", rows, BOOKING_COLUMNS, back="dashboard:bookings")


class BookingCancelView(OrgMixin, View):
    """POST: cancels the booking (any member: the people running the line handle bookings)."""

    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        booking, canceled = booking_cancel(booking=get_for_org(Booking, self.org, self.kwargs["booking_id"]))
        # Said as the list shows it: the calendar's local time, zone named.
        when = f"{timezone.localtime(booking.start_at, ZoneInfo(booking.timezone)):%b %-d, %H:%M} {booking.timezone}"
        if canceled:
            messages.success(request, f"Booking for {booking.contact_name or 'the caller'} on {when} canceled: the "
                                      "slot is free again.")
        else:
            messages.info(request, "That booking was already canceled.")
        back = request.POST.get("next", "")
        if back and url_has_allowed_host_and_scheme(back, allowed_hosts=None) and back.startswith("/"):
            return redirect(back)  # the call page it was canceled from
        return redirect("dashboard:bookings")
