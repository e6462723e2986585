"""Locations: members read; admins create, edit and delete through `knowledge.services.location_*`.

A location is part of what the agent knows (address, hours' time zone, phone), so every change bumps the
knowledge version like a fact does. Deleting a location keeps its facts, which then apply everywhere.
"""

from django import forms
from django.db.models import Count
from django.views.generic import TemplateView

from core.timezones import timezone_choices
from knowledge import selectors, services
from orgs.models import Location

from ..forms import DashboardForm
from ..mixins import OrgMixin
from .knowledge_rows import KnowledgeDeleteView, KnowledgeFormView, KnowledgeRowMixin, changed


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
        return {field: getattr(location, field) for field in LocationForm.base_fields}

    def write(self, form):
        return services.location_update(location=self.get_row(), actor=self.request.user, **changed(form))


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
