"""Settings → Calendars: members read; admins create, edit (the weekly-hours editor) and delete calendars through
`calls.services.configuration.calendar_*`, the services /v1/calendars uses."""

from functools import cache
from zoneinfo import available_timezones

from django.contrib import messages
from django.shortcuts import redirect
from django.views.generic import FormView, TemplateView

from calls.models import Booking, Calendar
from calls.services import configuration
from orgs import selectors as org_selectors
from orgs.tenancy import get_for_org
from voiceagent.errors import Conflict, NotFound, ValidationFailed

from ..forms import CalendarForm
from ..mixins import AdminRequiredMixin, OrgMixin


@cache
def _timezones() -> list[str]:
    return sorted(available_timezones() - {"Factory", "localtime"})


class CalendarListView(OrgMixin, TemplateView):
    template_name = "dashboard/settings/calendars.html"

    def get_context_data(self, **kwargs):
        calendars = Calendar.objects.for_org(self.org).select_related("location").order_by("name", "id")
        rows = [{"calendar": c, "hours": CalendarForm.initial_hours(c.weekly_hours)} for c in calendars]
        return super().get_context_data(rows=rows, days=CalendarForm.DAY_LABELS, **kwargs)


class CalendarFormMixin(AdminRequiredMixin):
    template_name = "dashboard/settings/calendar_form.html"
    form_class = CalendarForm

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "locations": org_selectors.location_list(org=self.org).order_by("name")}

    def get_context_data(self, **kwargs):
        return super().get_context_data(timezones=_timezones(), **kwargs)

    def form_valid(self, form):
        try:
            calendar = self.save(form.service_values())
        except (ValidationFailed, Conflict, NotFound) as exc:
            if isinstance(exc, NotFound):
                exc = ValidationFailed(form_errors=["That location no longer exists."])
            elif isinstance(exc, Conflict):
                exc.message = "A calendar with this name already exists."
            form.apply_domain_error(exc)
            return self.form_invalid(form)
        messages.success(self.request, f"Calendar “{calendar.name}” saved. The agent books into it from its next "
                                       "knowledge read.")
        return redirect("dashboard:calendars")


class CalendarCreateView(CalendarFormMixin, FormView):
    def get_initial(self):
        return {"timezone": "UTC", "slot_minutes": 30}

    def save(self, values):
        return configuration.calendar_create(org=self.org, **values)


class CalendarMixin(AdminRequiredMixin):
    def get_calendar(self) -> Calendar:
        if not hasattr(self, "_calendar"):
            self._calendar = get_for_org(Calendar, self.org, self.kwargs["calendar_id"])
        return self._calendar


class CalendarEditView(CalendarFormMixin, CalendarMixin, FormView):
    def get_initial(self):
        calendar = self.get_calendar()
        return {"name": calendar.name, "timezone": calendar.timezone, "slot_minutes": calendar.slot_minutes,
                "location": str(calendar.location_id or ""), **CalendarForm.initial_hours(calendar.weekly_hours)}

    def get_context_data(self, **kwargs):
        return super().get_context_data(calendar=self.get_calendar(), **kwargs)

    def save(self, values):
        calendar = self.get_calendar()
        try:
            return configuration.calendar_update(calendar=calendar, **values)
        except (ValidationFailed, Conflict, NotFound):
            calendar.refresh_from_db()
            raise


class CalendarDeleteView(CalendarMixin, TemplateView):
    template_name = "dashboard/settings/calendar_delete.html"

    def get_context_data(self, **kwargs):
        calendar = self.get_calendar()
        upcoming = calendar.bookings.filter(status=Booking.Status.CONFIRMED).order_by("start_at")
        return super().get_context_data(calendar=calendar, upcoming=upcoming, **kwargs)

    def post(self, request, *args, **kwargs):
        calendar = self.get_calendar()
        try:
            configuration.calendar_delete(calendar=calendar)
        except Conflict as exc:
            messages.error(request, str(exc))
            return redirect("dashboard:calendar-delete", calendar_id=calendar.pk)
        messages.success(request, f"Calendar “{calendar.name}” deleted. Its past bookings stay.")
        return redirect("dashboard:calendars")
