"""Settings → Data & privacy (admins, the whole organization): the retention policy with what the next purge would
delete, erasure requests with each subscriber's confirmation, and the suppression list, through privacy.services and
privacy.selectors as /v1/privacy does; and its Redaction page: which kinds of sensitive data are replaced in calls'
text at ingest, and whether recordings of calls where a card, government id or bank account number was heard are
kept, through the same service as PATCH /v1/privacy/redaction (orgs.redaction), audited the same way."""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.views.generic import FormView, TemplateView, View

from core.sensitive import DEFAULT_KINDS, KINDS
from orgs import redaction
from orgs.models import Location
from orgs.tenancy import get_for_org
from privacy import selectors, services
from privacy.models import MAX_DAYS, MIN_DAYS, Suppression

from ..forms import DashboardForm
from ..mixins import AdminRequiredMixin

TEMPLATE = "dashboard/settings/privacy.html"
RECENT_REQUESTS = 20
DAYS_HELP = f"Days after the call, {MIN_DAYS} to {MAX_DAYS:,}. Empty: kept for good."


def _days_field(label: str) -> forms.IntegerField:
    return forms.IntegerField(label=label, required=False, help_text=DAYS_HELP,
                              widget=forms.NumberInput(attrs={"inputmode": "numeric"}))


class RetentionForm(DashboardForm):
    recordings_days = _days_field("Recordings")
    transcripts_days = _days_field("Transcripts and every text quoting the caller")

    def __init__(self, *args, locations, policy, **kwargs):
        own = {entry["location_id"]: entry for entry in policy["locations"]}
        kwargs.setdefault("initial", {"recordings_days": policy["recordings_days"],
                                      "transcripts_days": policy["transcripts_days"]})
        for location in locations:
            entry = own.get(location.pk)
            kwargs["initial"].update({f"own_{location.pk}": entry is not None,
                                      f"recordings_{location.pk}": entry and entry["recordings_days"],
                                      f"transcripts_{location.pk}": entry and entry["transcripts_days"]})
        super().__init__(*args, **kwargs)
        self.locations = locations
        for location in locations:
            self.fields[f"own_{location.pk}"] = forms.BooleanField(label=f"{location.name}: its own retention",
                                                                   required=False)
            self.fields[f"recordings_{location.pk}"] = _days_field(f"{location.name}: recordings")
            self.fields[f"transcripts_{location.pk}"] = _days_field(f"{location.name}: transcripts")

    def location_rows(self):
        return [(location, self[f"own_{location.pk}"], self[f"recordings_{location.pk}"],
                 self[f"transcripts_{location.pk}"]) for location in self.locations]

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {
            "recordings_days": data.get("recordings_days"), "transcripts_days": data.get("transcripts_days"),
            "locations": [{"location_id": str(location.pk), "recordings_days": data.get(f"recordings_{location.pk}"),
                           "transcripts_days": data.get(f"transcripts_{location.pk}")}
                          for location in self.locations if data.get(f"own_{location.pk}")],
        }


class ErasureForm(DashboardForm):
    phone_number = forms.CharField(label="The caller's phone number", max_length=32,
                                   widget=forms.TextInput(attrs={"autocomplete": "off", "inputmode": "tel"}))
    suppress = forms.BooleanField(label="Also keep nothing of this number's later calls", required=False)


class PrivacyMixin(AdminRequiredMixin):
    whole_org_only = True

    def locations(self):
        return list(Location.objects.for_org(self.org).order_by("name", "id"))

    def page(self, *, retention_form=None, erasure_form=None, status=200):
        policy = selectors.retention_get(org=self.org)
        requests = list(selectors.erasure_request_list(org=self.org)[:RECENT_REQUESTS])
        confirmations = selectors.erasure_confirmations(requests)
        context = {
            "policy": policy,
            "nothing_expires": policy["recordings_days"] is None and policy["transcripts_days"] is None
            and all(e["recordings_days"] is None and e["transcripts_days"] is None for e in policy["locations"]),
            "preview": selectors.retention_preview(org=self.org),
            "retention_form": retention_form or RetentionForm(locations=self.locations(), policy=policy,
                                                              prefix="retention"),
            "erasure_form": erasure_form or ErasureForm(prefix="erasure"),
            "erasures": [{"request": r, "confirmations": confirmations[r.pk]} for r in requests],
            "suppressions": selectors.suppression_list(org=self.org),
        }
        return self.render_to_response(self.get_context_data(**context), status=status)


class PrivacySettingsView(PrivacyMixin, TemplateView):
    template_name = TEMPLATE

    def get(self, request, *args, **kwargs):
        return self.page()


class RetentionSaveView(PrivacyMixin, TemplateView):
    template_name = TEMPLATE
    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        form = RetentionForm(request.POST, locations=self.locations(), policy=selectors.retention_get(org=self.org),
                             prefix="retention")
        if form.is_valid():
            with form.service_errors():
                services.retention_update(org=self.org, **form.service_arguments())
            if not form.errors:
                messages.success(request, "Retention saved: the next daily purge applies it.")
                return redirect("dashboard:settings-privacy")
        return self.page(retention_form=form, status=400)


class ErasureCreateView(PrivacyMixin, TemplateView):
    template_name = TEMPLATE
    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        form = ErasureForm(request.POST, prefix="erasure")
        if form.is_valid():
            with form.service_errors():
                erasure = services.erasure_request_create(org=self.org, **form.cleaned_data)
            if not form.errors:
                messages.success(request, f"Erasure of {erasure.phone_number_masked} requested: it completes within "
                                 "minutes.")
                return redirect("dashboard:settings-privacy")
        return self.page(erasure_form=form, status=400)


class SuppressionDeleteView(PrivacyMixin, View):
    http_method_names = ["post"]

    def post(self, request, suppression_id):
        suppression = get_for_org(Suppression, self.org, suppression_id)
        services.suppression_delete(suppression=suppression)
        messages.success(request, f"{suppression.phone_number_masked} is no longer suppressed.")
        return redirect("dashboard:settings-privacy")


# --- Redaction ------------------------------------------------------------------------------------------------

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
