"""Contacts: search, create, edit, and a contact's page with its calls.

Every member of the org may create and edit contacts (answering the phone line is everyone's job); the rules
(E.164 in the org's default region, one contact per number) are `contacts.services`', exactly as for the API,
and a clash comes back as the form error on `phone_number`.
"""

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import redirect
from django.utils.http import urlencode
from django.views.generic import FormView, TemplateView, View

from calls.selectors import call_list
from contacts import selectors, services
from contacts.exports import CONTACT_COLUMNS
from contacts.models import Contact
from orgs.tenancy import get_for_org, location_ids_of

from ..downloads import csv_download, fix_filters
from ..forms import DashboardForm
from ..mixins import OrgMixin

PAGE_SIZE = 25
CALLS_SHOWN = 50


class ContactSearchForm(forms.Form):
    q = forms.CharField(
        label="Search contacts", required=False, max_length=200,
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "Name, phone or email"}),
    )


class ContactForm(DashboardForm):
    phone_number = forms.CharField(
        label="Phone number", max_length=32,
        help_text="With +country code, or in the organization's default region.",
        widget=forms.TextInput(attrs={"type": "tel", "autocomplete": "off"}),
    )
    name = forms.CharField(max_length=200, required=False)
    email = forms.EmailField(max_length=254, required=False)
    notes = forms.CharField(max_length=5000, required=False, widget=forms.Textarea(attrs={"rows": 4}))



class ContactListView(OrgMixin, TemplateView):
    """The org's contacts, newest first, optionally matching `?q=` (name, email, or phone by digits)."""

    template_name = "dashboard/contacts/list.html"

    def get_context_data(self, **kwargs):
        search = ContactSearchForm(self.request.GET or None)
        query = search.cleaned_data["q"].strip() if search.is_valid() else ""
        contacts = selectors.contact_list(org=self.org, search=query).order_by("-created_at", "-id")
        page = Paginator(contacts, PAGE_SIZE).get_page(self.request.GET.get("page"))
        return super().get_context_data(search=search, query=query, page=page, contacts=page.object_list,
                                        export_query=urlencode({"q": query}) if query else "", **kwargs)


class ContactExportView(OrgMixin, View):
    """The list's contacts for its current search as CSV (contacts/exports.py's columns)."""

    def get(self, request, *args, **kwargs):
        search = ContactSearchForm(request.GET or None)
        if search.is_bound and not search.is_valid():
            return fix_filters("contacts")
        query = search.cleaned_data["q"].strip() if search.is_bound else ""
        contacts = selectors.contact_list(org=self.org, search=query).order_by("-created_at", "-id")
        return csv_download(request, self.org, "contacts", contacts, CONTACT_COLUMNS,
                            back="dashboard:contacts")


class ContactMixin(OrgMixin):
    def get_contact(self) -> Contact:
        if not hasattr(self, "_contact"):
            self._contact = get_for_org(Contact, self.org, self.kwargs["contact_id"])
        return self._contact


class ContactDetailView(ContactMixin, TemplateView):
    """One contact and their most recent calls (the same `call_list` selector as /v1/calls?contact_id=)."""

    template_name = "dashboard/contacts/detail.html"

    def get_context_data(self, **kwargs):
        contact = self.get_contact()
        calls = call_list(org=self.org, contact_id=contact.pk).order_by("-started_at", "-id")
        call_count = calls.count()
        return super().get_context_data(
            contact=contact, calls=calls[:CALLS_SHOWN], call_count=call_count, calls_truncated=call_count > CALLS_SHOWN,
            **kwargs,
        )


class ContactCreateView(OrgMixin, FormView):
    template_name = "dashboard/contacts/form.html"
    form_class = ContactForm

    def form_valid(self, form):
        with form.service_errors():
            contact = services.contact_create(org=self.org, source=Contact.Source.DASHBOARD, **form.cleaned_data)
        if form.errors:
            return self.form_invalid(form)
        if location_ids_of(self.org) is not None:
            # A location manager sees a contact once it has a call at one of their locations, which a contact just
            # created never has (nor one created under a number only another location knows: contacts.services).
            messages.success(self.request, f"Contact {contact} added. It shows here once it has a call at one of "
                                           "your locations.")
            return redirect("dashboard:contacts")
        messages.success(self.request, f"Contact {contact} added.")
        return redirect("dashboard:contact-detail", contact_id=contact.pk)


class ContactEditView(ContactMixin, FormView):
    template_name = "dashboard/contacts/form.html"
    form_class = ContactForm

    def get_initial(self):
        contact = self.get_contact()
        return {field: getattr(contact, field) or "" for field in ContactForm.base_fields}

    def get_context_data(self, **kwargs):
        return super().get_context_data(contact=self.get_contact(), **kwargs)

    def form_valid(self, form):
        contact = self.get_contact()
        changes = {field: form.cleaned_data[field] for field in form.changed_data}
        if changes:
            with form.service_errors():
                contact = services.contact_update(contact=contact, **changes)
            if form.errors:
                return self.form_invalid(form)
            messages.success(self.request, f"Contact {contact} saved.")
        else:
            messages.info(self.request, "Nothing to save: no field changed.")
        return redirect("dashboard:contact-detail", contact_id=contact.pk)
