"""Bookings: every member sees the org's bookings (upcoming first, then past; filters calendar, location, status,
dates) and cancels one through `calls.services.bookings.booking_cancel`, the service /v1/bookings uses."""

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import View
from django.views.generic import TemplateView

from calls.models import Booking
from calls.services.bookings import booking_cancel
from knowledge import selectors as org_selectors
from knowledge.models import Calendar
from orgs.tenancy import get_for_org

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



class BookingListView(OrgMixin, TemplateView):
    template_name = "dashboard/bookings/list.html"

    def get_context_data(self, **kwargs):
        form = BookingFilterForm(
            self.request.GET or None,
            calendars=Calendar.objects.for_org(self.org).order_by("name"),
            locations=org_selectors.location_list(org=self.org).order_by("name"),
        )
        rows = Booking.objects.for_org(self.org).select_related("calendar", "location", "call")
        if form.is_bound and form.is_valid():
            data = form.cleaned_data
            for field in ("calendar", "location", "status"):
                if data.get(field):
                    rows = rows.filter(**{f"{field}_id" if field != "status" else field: data[field]})
            since, until = form.day_bounds()
            if since:
                rows = rows.filter(start_at__gte=since)
            if until:
                rows = rows.filter(start_at__lt=until)
        elif form.is_bound:
            rows = rows.none()
        now = timezone.now()
        upcoming = list(rows.filter(end_at__gt=now).order_by("start_at", "id")[:200])
        page = Paginator(rows.filter(end_at__lte=now).order_by("-start_at", "-id"), PAGE_SIZE).get_page(
            self.request.GET.get("page"))
        return super().get_context_data(form=form, upcoming=upcoming, past=page, page=page,
                                        filtered=form.is_bound, **kwargs)


class BookingCancelView(OrgMixin, View):
    """POST: cancels the booking (any member: the people running the line handle bookings)."""

    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        booking, canceled = booking_cancel(booking=get_for_org(Booking, self.org, self.kwargs["booking_id"]))
        when = timezone.localtime(booking.start_at).strftime("%b %-d, %H:%M")
        if canceled:
            messages.success(request, f"Booking for {booking.contact_name or 'the caller'} on {when} canceled: the "
                                      "slot is free again.")
        else:
            messages.info(request, "That booking was already canceled.")
        back = request.POST.get("next", "")
        if back and url_has_allowed_host_and_scheme(back, allowed_hosts=None) and back.startswith("/"):
            return redirect(back)  # the call page it was canceled from
        return redirect("dashboard:bookings")
