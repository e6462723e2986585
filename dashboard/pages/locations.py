"""Locations: members read; admins create, edit and delete through `knowledge.services.location_*`.

A location is part of what the agent knows (address, hours' time zone, phone), so every change bumps the
knowledge version like a fact does. Deleting a location keeps its facts, which then apply everywhere.
"""

from django import forms
from django.db.models import Count
from django.views.generic import TemplateView

from core.errors import ValidationFailed
from core.timezones import timezone_choices
from knowledge import selectors, services
from orgs.models import Location

from ..forms import DashboardForm
from ..mixins import OrgMixin
from .calendars import CalendarForm
from .knowledge_rows import KnowledgeDeleteView, KnowledgeFormView, KnowledgeRowMixin


class LocationForm(DashboardForm):
    name = forms.CharField(max_length=200)
    address = forms.CharField(max_length=5000, widget=forms.Textarea(attrs={"rows": 3}))
    timezone = forms.CharField(
        label="Time zone", max_length=64, help_text="An IANA name, e.g. America/New_York.",
        widget=forms.TextInput(attrs={"list": "timezones", "autocomplete": "off"}),
    )
    phone_number = forms.CharField(
        label="Phone number", max_length=32, widget=forms.TextInput(attrs={"type": "tel", "autocomplete": "off"})
    )

    DAY_LABELS = CalendarForm.DAY_LABELS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Opening hours, as a calendar's weekly hours: the line watchdog (Alerts) counts expected calls while open.
        for day, label in self.DAY_LABELS.items():
            self.fields[f"hours_{day}"] = forms.CharField(
                label=label, required=False,
                widget=forms.TextInput(attrs={"placeholder": "closed (e.g. 09:00-12:00, 13:00-17:00)",
                                              "autocomplete": "off"}),
            )

    def clean(self):
        data = super().clean()
        weekly_hours = []
        for day in self.DAY_LABELS:
            for span in filter(None, (part.strip() for part in (data.pop(f"hours_{day}", "") or "").split(","))):
                start, _, end = span.partition("-")
                weekly_hours.append({"day": day, "start": start.strip(), "end": end.strip()})
        data["weekly_hours"] = weekly_hours
        return data

    def hours_fields(self):
        return [self[f"hours_{day}"] for day in self.DAY_LABELS]

    def apply_domain_error(self, exc):
        """`weekly_hours` problems name items; they are shown above the form, in words."""
        if isinstance(exc, ValidationFailed) and "weekly_hours" in (exc.details or {}).get("fieldErrors", {}):
            for message in exc.details["fieldErrors"].pop("weekly_hours"):
                self.add_error(None, f"Opening hours: {message}")
        return super().apply_domain_error(exc)


def _location_changes(form) -> dict:
    """An edit's changes: the fields that changed, and the opening hours whole when any day changed."""
    changes = {field: form.cleaned_data[field] for field in form.changed_data if not field.startswith("hours_")}
    if any(field.startswith("hours_") for field in form.changed_data):
        changes["weekly_hours"] = form.cleaned_data["weekly_hours"]
    return changes



class LocationListView(OrgMixin, TemplateView):
    template_name = "dashboard/locations/list.html"

    def get_context_data(self, **kwargs):
        locations = selectors.location_list(org=self.org).annotate(fact_count=Count("facts")).order_by("name", "id")
        return super().get_context_data(locations=locations, **kwargs)


class LocationFormMixin:
    template_name = "dashboard/locations/form.html"
    form_class = LocationForm
    list_url = "dashboard:locations"
    conflict = "A location with this name already exists."

    def get_context_data(self, **kwargs):
        return super().get_context_data(timezones=timezone_choices(), **kwargs)

    def saved(self, location) -> str:
        return f"Location “{location.name}” saved. The agent knows it from its next read."


class LocationCreateView(LocationFormMixin, KnowledgeFormView):
    def get_initial(self):
        # A chosen zone is the likely one; UTC is only the default until the first location names the real one.
        return {"timezone": self.org.time_zone} if self.org.time_zone != "UTC" else {}

    def write(self, form):
        return services.location_create(org=self.org, actor=self.request.user, **form.cleaned_data)


class LocationMixin(KnowledgeRowMixin):
    rows, url_kwarg, context_name = Location, "location_id", "location"


class LocationEditView(LocationFormMixin, LocationMixin, KnowledgeFormView):
    def get_initial(self):
        location = self.get_row()
        return {**{field: getattr(location, field) for field in LocationForm.base_fields},
                **CalendarForm.initial_hours(location.weekly_hours or [])}

    def write(self, form):
        return services.location_update(location=self.get_row(), actor=self.request.user, **_location_changes(form))


class LocationDeleteView(LocationMixin, KnowledgeDeleteView):
    """GET asks for confirmation (and says what happens to the location's facts); POST deletes."""

    template_name = "dashboard/locations/delete.html"
    list_url = "dashboard:locations"

    def get_context_data(self, **kwargs):
        facts = selectors.fact_list(org=self.org).filter(location=self.get_row()).order_by("label")
        return super().get_context_data(facts=facts, **kwargs)

    def delete(self, location) -> None:
        services.location_delete(location=location, actor=self.request.user)

    def deleted(self, location) -> str:
        return f"Location “{location.name}” deleted. Its facts now apply to every location."
