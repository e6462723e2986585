"""Settings → Data & privacy → Redaction (admins): which kinds of sensitive data are replaced in calls' text at
ingest, and whether recordings of calls where a card, government id or bank account number was heard are kept.
The same service as PATCH /v1/privacy/redaction (orgs.redaction), audited the same way."""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.views.generic import FormView

from core.sensitive import DEFAULT_KINDS, KINDS
from orgs import redaction

from ..forms import DashboardForm
from ..mixins import AdminRequiredMixin

KIND_LABELS = {
    "card_number": "Card numbers, with their expiry and security code",
    "government_id": "Government ids (social security and national identity numbers)",
    "bank_account": "Bank accounts (IBANs, routing and account numbers)",
    "email": "E-mail addresses",
    "phone_number": "Phone numbers (other than your own)",
    "date_of_birth": "Dates of birth",
}


class RedactionForm(DashboardForm):
    kinds = forms.MultipleChoiceField(
        label="Redact from calls' text", required=False, widget=forms.CheckboxSelectMultiple,
        choices=[(kind, KIND_LABELS[kind]) for kind in KINDS],
        help_text="Each one found is replaced by its kind in brackets ([card_number]) before the call is stored, "
                  "shown or sent anywhere. The first three are on unless you turn them off.",
    )
    keep_recordings_with_sensitive_data = forms.BooleanField(
        label="Keep recordings of calls where a card, government id or bank account number was heard", required=False,
        help_text="Off: such a call keeps no recording (deleted if it arrived first).",
    )


class RedactionSettingsView(AdminRequiredMixin, FormView):
    whole_org_only = True
    template_name = "dashboard/settings/redaction.html"
    form_class = RedactionForm

    def get_initial(self):
        return {"kinds": list(self.org.redaction_kinds or []),
                "keep_recordings_with_sensitive_data": self.org.keep_recordings_with_sensitive_data}

    def get_context_data(self, **kwargs):
        return super().get_context_data(policy=redaction.redaction_policy_data(self.org), defaults=DEFAULT_KINDS,
                                        **kwargs)

    def form_valid(self, form):
        with form.service_errors():
            redaction.redaction_policy_update(org=self.org, by=self.request.user, **form.cleaned_data)
        if form.errors:
            return self.form_invalid(form)
        messages.success(self.request, "Redaction settings saved. They apply to calls from now on.")
        return redirect("dashboard:settings-redaction")
