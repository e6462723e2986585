"""Settings → Calendars: members read; admins create, edit (the weekly-hours editor) and delete calendars through
`knowledge.services.calendar_*`, the services /v1/calendars uses."""

from django import forms
from django.shortcuts import redirect
from django.views.generic import TemplateView

from calls.models import Booking
from core.errors import ValidationFailed
from core.timezones import timezone_choices
from knowledge import selectors, services
from knowledge.models import Calendar

from ..forms import BoundedIntegerField, DashboardForm
from ..mixins import OrgMixin
from .knowledge_rows import KnowledgeDeleteView, KnowledgeFormView, KnowledgeRowMixin


class CalendarForm(DashboardForm):
    """A calendar with its weekly-hours editor: one field per day, `09:00-12:00, 13:00-17:00` (empty: closed)."""

    DAY_LABELS = {"mon": "Monday", "tue": "Tuesday", "wed": "Wednesday", "thu": "Thursday", "fri": "Friday",
                  "sat": "Saturday", "sun": "Sunday"}

    name = forms.CharField(max_length=200, help_text="Unique in your organization, e.g. “Table reservations”.")
    timezone = forms.CharField(
        label="Time zone", max_length=64, help_text="The hours below are local times in this IANA zone.",
        widget=forms.TextInput(attrs={"list": "timezones", "autocomplete": "off"}),
    )
    slot_minutes = BoundedIntegerField(label="Slot length (minutes)", min_value=5, max_value=480, initial=30)
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



class CalendarListView(OrgMixin, TemplateView):
    template_name = "dashboard/settings/calendars.html"

    def get_context_data(self, **kwargs):
        calendars = selectors.calendar_list(org=self.org).select_related("location").order_by("name", "id")
        rows = [{"calendar": c, "hours": CalendarForm.initial_hours(c.weekly_hours)} for c in calendars]
        return super().get_context_data(rows=rows, days=CalendarForm.DAY_LABELS, **kwargs)


class CalendarFormMixin:
    location_manager_writes = True  # within their scope (mixins.OrgMixin)
    template_name = "dashboard/settings/calendar_form.html"
    form_class = CalendarForm
    list_url = "dashboard:calendars"
    conflict = "A calendar with this name already exists."
    missing = "That location no longer exists."

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "locations": selectors.location_list(org=self.org).order_by("name")}

    def get_context_data(self, **kwargs):
        return super().get_context_data(timezones=timezone_choices(), **kwargs)

    def saved(self, calendar) -> str:
        return f"Calendar “{calendar.name}” saved. The agent books into it from its next knowledge read."


class CalendarCreateView(CalendarFormMixin, KnowledgeFormView):
    def get_initial(self):
        return {"timezone": self.org.time_zone, "slot_minutes": 30}  # most calendars keep the organization's hours

    def write(self, form):
        return services.calendar_create(org=self.org, actor=self.request.user, **form.service_values())


class CalendarMixin(KnowledgeRowMixin):
    location_manager_writes = True  # within their scope (mixins.OrgMixin)
    rows, url_kwarg, context_name = Calendar, "calendar_id", "calendar"


class CalendarEditView(CalendarFormMixin, CalendarMixin, KnowledgeFormView):
    def get_initial(self):
        calendar = self.get_row()
        return {"name": calendar.name, "timezone": calendar.timezone, "slot_minutes": calendar.slot_minutes,
                "location": str(calendar.location_id or ""), **CalendarForm.initial_hours(calendar.weekly_hours)}

    def write(self, form):
        return services.calendar_update(calendar=self.get_row(), actor=self.request.user, **form.service_values())


class CalendarDeleteView(CalendarMixin, KnowledgeDeleteView):
    """Refused while upcoming confirmed bookings remain: the page lists them."""

    template_name = "dashboard/settings/calendar_delete.html"
    list_url = "dashboard:calendars"

    def get_context_data(self, **kwargs):
        upcoming = self.get_row().bookings.filter(status=Booking.Status.CONFIRMED).order_by("start_at")
        return super().get_context_data(upcoming=upcoming, **kwargs)

    def delete(self, calendar) -> None:
        services.calendar_delete(calendar=calendar, actor=self.request.user)

    def deleted(self, calendar) -> str:
        return f"Calendar “{calendar.name}” deleted. Its past bookings stay."

    def refused_redirect(self, calendar):
        return redirect("dashboard:calendar-delete", calendar_id=calendar.pk)
