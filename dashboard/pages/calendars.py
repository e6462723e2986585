"""Settings → Calendars: members read; admins create, edit (the weekly-hours editor) and delete calendars through
`calls.services.configuration.calendar_*`, the services /v1/calendars uses."""

from functools import cache
from zoneinfo import available_timezones

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.views.generic import FormView, TemplateView

from calls.models import Booking
from knowledge import selectors as org_selectors
from knowledge import services as configuration
from knowledge.models import Calendar
from orgs.tenancy import get_for_org
from voiceagent.errors import Conflict, NotFound, ValidationFailed

from ..forms import DashboardForm
from ..mixins import AdminRequiredMixin, OrgMixin


class CalendarForm(DashboardForm):
    """A calendar with its weekly-hours editor: one field per day, `09:00-12:00, 13:00-17:00` (empty: closed)."""

    DAY_LABELS = {"mon": "Monday", "tue": "Tuesday", "wed": "Wednesday", "thu": "Thursday", "fri": "Friday",
                  "sat": "Saturday", "sun": "Sunday"}

    name = forms.CharField(max_length=200, help_text="Unique in your organization, e.g. “Table reservations”.")
    timezone = forms.CharField(
        label="Time zone", max_length=64, help_text="The hours below are local times in this IANA zone.",
        widget=forms.TextInput(attrs={"list": "timezones", "autocomplete": "off"}),
    )
    slot_minutes = forms.IntegerField(label="Slot length (minutes)", min_value=5, max_value=480, initial=30)
    location = forms.ChoiceField(label="Location", required=False)

    def __init__(self, *args, locations=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["location"].choices = [("", "Not tied to a location")] + [
            (str(location.pk), location.name) for location in locations
        ]
        for day, label in self.DAY_LABELS.items():
            self.fields[f"hours_{day}"] = forms.CharField(
                label=label, required=False,
                widget=forms.TextInput(attrs={"placeholder": "closed (e.g. 09:00-12:00, 13:00-17:00)",
                                              "autocomplete": "off"}),
            )

    @classmethod
    def initial_hours(cls, weekly_hours: list[dict]) -> dict:
        by_day = {day: [] for day in cls.DAY_LABELS}
        for window in sorted(weekly_hours, key=lambda w: w["start"]):
            by_day[window["day"]].append(f"{window['start']}-{window['end']}")
        return {f"hours_{day}": ", ".join(spans) for day, spans in by_day.items()}

    def clean(self):
        data = super().clean()
        weekly_hours = []
        for day in self.DAY_LABELS:
            for span in filter(None, (part.strip() for part in (data.get(f"hours_{day}") or "").split(","))):
                start, _, end = span.partition("-")
                weekly_hours.append({"day": day, "start": start.strip(), "end": end.strip()})
        data["weekly_hours"] = weekly_hours
        data["location"] = data.get("location") or None
        return data

    def apply_domain_error(self, exc):
        """`weekly_hours` problems name items; they are shown above the days, in words."""
        if isinstance(exc, ValidationFailed) and "weekly_hours" in (exc.details or {}).get("fieldErrors", {}):
            for message in exc.details["fieldErrors"].pop("weekly_hours"):
                self.add_error(None, f"Weekly hours: {message}")
        return super().apply_domain_error(exc)

    def service_values(self) -> dict:
        data = self.cleaned_data
        return {"name": data["name"], "timezone_name": data["timezone"], "slot_minutes": data["slot_minutes"],
                "location": data["location"], "weekly_hours": data["weekly_hours"]}



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
