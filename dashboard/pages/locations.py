"""Locations: members read; admins create, edit and delete through `orgs.services.location_*`.

A location is part of what the agent knows (address, hours' time zone, phone), so every change bumps the
knowledge version like a fact does. Deleting a location keeps its facts, which then apply everywhere.
"""

from functools import cache
from zoneinfo import available_timezones

from django import forms
from django.contrib import messages
from django.db.models import Count
from django.shortcuts import redirect
from django.views.generic import FormView, TemplateView

from knowledge import selectors, services
from knowledge.models import Location
from orgs.tenancy import get_for_org
from voiceagent.errors import Conflict, ValidationFailed

from ..forms import DashboardForm
from ..mixins import AdminRequiredMixin, OrgMixin


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



@cache
def _timezones() -> list[str]:
    return sorted(available_timezones() - {"Factory", "localtime"})


class LocationListView(OrgMixin, TemplateView):
    template_name = "dashboard/locations/list.html"

    def get_context_data(self, **kwargs):
        locations = selectors.location_list(org=self.org).annotate(fact_count=Count("facts")).order_by("name", "id")
        return super().get_context_data(locations=locations, **kwargs)


class LocationFormMixin:
    template_name = "dashboard/locations/form.html"
    form_class = LocationForm

    def get_context_data(self, **kwargs):
        return super().get_context_data(timezones=_timezones(), **kwargs)

    def form_valid(self, form):
        try:
            location = self.save(form)
        except (ValidationFailed, Conflict) as exc:
            if isinstance(exc, Conflict):
                exc.message = "A location with this name already exists."
            form.apply_domain_error(exc)
            return self.form_invalid(form)
        messages.success(self.request, f"Location “{location.name}” saved. The agent knows it from its next read.")
        return redirect("dashboard:locations")


class LocationCreateView(LocationFormMixin, AdminRequiredMixin, FormView):
    def save(self, form):
        return services.location_create(org=self.org, **form.cleaned_data)


class LocationMixin(AdminRequiredMixin):
    def get_location(self) -> Location:
        if not hasattr(self, "_location"):
            self._location = get_for_org(Location, self.org, self.kwargs["location_id"])
        return self._location


class LocationEditView(LocationFormMixin, LocationMixin, FormView):
    def get_initial(self):
        location = self.get_location()
        return {field: getattr(location, field) for field in LocationForm.base_fields}

    def get_context_data(self, **kwargs):
        return super().get_context_data(location=self.get_location(), **kwargs)

    def save(self, form):
        location = self.get_location()
        changes = {field: form.cleaned_data[field] for field in form.changed_data}
        try:
            return services.location_update(location=location, **changes) if changes else location
        except (ValidationFailed, Conflict):
            location.refresh_from_db()  # the service set the refused values on this instance
            raise


class LocationDeleteView(LocationMixin, TemplateView):
    """GET asks for confirmation (and says what happens to the location's facts); POST deletes."""

    template_name = "dashboard/locations/delete.html"

    def get_context_data(self, **kwargs):
        location = self.get_location()
        facts = selectors.fact_list(org=self.org).filter(location=location).order_by("label")
        return super().get_context_data(location=location, facts=facts, **kwargs)

    def post(self, request, *args, **kwargs):
        location = self.get_location()
        services.location_delete(location=location)
        messages.success(request, f"Location “{location.name}” deleted. Its facts now apply to every location.")
        return redirect("dashboard:locations")
