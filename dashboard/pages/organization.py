"""Settings → Organization (name, phone region, time zone, product switches) and switching the current organization."""

import uuid

import phonenumbers
from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.views.generic import FormView, View

from core.errors import NotFound
from core.timezones import timezone_choices
from orgs import selectors, services

from ..forms import DashboardForm
from ..mixins import AdminRequiredMixin, OrgMixin, remember_org


class OrganizationForm(DashboardForm):
    """A plain form, not a ModelForm: a ModelForm writes onto the instance while validating, and the
    write itself belongs to `organization_update`."""

    name = forms.CharField(label="Organization name", max_length=200)
    default_phone_region = forms.CharField(
        label="Default phone region",
        max_length=2,
        min_length=2,
        help_text="Two-letter country code (e.g. US, GB, DE) used for phone numbers written without a +country code.",
        widget=forms.TextInput(attrs={"autocapitalize": "characters", "size": 4}),
    )
    time_zone = forms.CharField(
        label="Time zone", max_length=64,
        help_text="An IANA name, e.g. America/Los_Angeles. The dashboard shows every time and counts days in it.",
        widget=forms.TextInput(attrs={"list": "timezones", "autocomplete": "off"}),
    )
    auto_save_contacts = forms.BooleanField(label="Save new callers as contacts automatically", required=False)
    call_recording_enabled = forms.BooleanField(label="Record calls", required=False)
    meetings_enabled = forms.BooleanField(label="Meetings product", required=False)

    def clean_default_phone_region(self):
        region = self.cleaned_data["default_phone_region"].strip().upper()
        if region not in phonenumbers.SUPPORTED_REGIONS:
            raise forms.ValidationError("Enter a two-letter country code such as US or GB.")
        return region


class OrganizationSettingsView(AdminRequiredMixin, FormView):
    """Members see the settings; admins change them through `organization_update`."""

    whole_org_only = True
    template_name = "dashboard/settings/organization.html"
    form_class = OrganizationForm
    admin_methods = ("POST",)
    fields = ("name", "default_phone_region", "time_zone", "auto_save_contacts", "call_recording_enabled",
              "meetings_enabled")

    def get_initial(self):
        return {field: getattr(self.org, field) for field in self.fields}

    def get_context_data(self, **kwargs):
        return super().get_context_data(timezones=timezone_choices(), **kwargs)

    def form_valid(self, form):
        changes = {field: form.cleaned_data[field] for field in form.changed_data}
        if changes:
            with form.service_errors():
                services.organization_update(org=self.org, by=self.request.user, **changes)
            if form.errors:
                return self.form_invalid(form)
            messages.success(self.request, "Settings saved.")
        else:
            messages.info(self.request, "Nothing to save: no setting changed.")
        return redirect("dashboard:settings-organization")


class OrgSwitchView(OrgMixin, View):
    """Makes another of the user's organizations the current one. Not a member of it: 404."""

    http_method_names = ["post"]

    def post(self, request):
        org_id = _uuid_or_none(request.POST.get("org"))
        membership = selectors.membership_for_user(user=request.user, org_id=org_id) if org_id else None
        if membership is None:
            raise NotFound()
        remember_org(request, membership.organization)
        return redirect("dashboard:home")


def _uuid_or_none(value):
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None
