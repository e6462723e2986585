"""Settings → API keys: every member sees the keys (never a plaintext); admins create one (its plaintext shown once,
once.py) and revoke."""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.views.generic import FormView, TemplateView

from knowledge.selectors import location_list
from orgs import selectors, services
from orgs.models import ApiKey
from orgs.tenancy import get_for_org
from orgs.verification import EmailNotVerified

from .. import once
from ..forms import DashboardForm
from ..mixins import AdminRequiredMixin, OrgMixin

NEW_API_KEY = "api_key"  # the kind of secret stashed in once.py


class ApiKeyCreateForm(DashboardForm):
    name = forms.CharField(
        max_length=200, help_text="What uses this key, e.g. “CRM sync”. Only you and your team see it."
    )
    scope = forms.ChoiceField(
        label="Access",
        choices=[
            (ApiKey.Scope.READ, "Read only: GET requests"),
            (ApiKey.Scope.READ_WRITE, "Read and write: also POST, PUT, PATCH and DELETE"),
            (ApiKey.Scope.READ_AUDIT, "Read and audit: GET requests, and the audit trail"),
            (ApiKey.Scope.READ_WRITE_AUDIT, "Read, write and audit: everything but privacy, the audit trail included"),
            (ApiKey.Scope.READ_PRIVACY, "Read and privacy: GET requests, and callers' erasures and suppressions"),
            (ApiKey.Scope.READ_WRITE_PRIVACY, "Read, write and privacy: also erasures and suppressions"),
            (ApiKey.Scope.READ_AUDIT_PRIVACY, "Read, audit and privacy: GET requests, the audit trail, erasures"),
            (ApiKey.Scope.READ_WRITE_AUDIT_PRIVACY, "Everything: read, write, the audit trail and privacy"),
        ],
        initial=ApiKey.Scope.READ,
        widget=forms.RadioSelect,
    )
    location_ids = forms.MultipleChoiceField(
        label="Locations", required=False, widget=forms.CheckboxSelectMultiple,
        help_text="Limit the key to these locations: it sees and changes only what happens there. None checked: "
                  "the whole organization.",
    )

    def __init__(self, *args, locations=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["location_ids"].choices = [(str(location.pk), location.name) for location in locations]
        if not self.fields["location_ids"].choices:
            del self.fields["location_ids"]


def _with_location_names(keys, org):
    """The keys, each with `location_names` (None: the whole organization): one query for the org's locations."""
    names = dict(location_list(org=org).values_list("pk", "name"))
    keys = list(keys)
    for key in keys:
        key.location_names = None if key.location_ids is None else [
            names.get(pk, "a deleted location") for pk in key.location_ids]
    return keys


class ApiKeyListView(OrgMixin, TemplateView):
    """Every member sees the keys (never a plaintext); only admins see the create and revoke controls."""

    whole_org_only = True
    template_name = "dashboard/settings/api_keys.html"

    def get_context_data(self, **kwargs):
        return super().get_context_data(keys=_with_location_names(selectors.api_key_list(org=self.org), self.org),
                                        **kwargs)


class ApiKeyCreateView(AdminRequiredMixin, FormView):
    template_name = "dashboard/settings/api_key_new.html"
    form_class = ApiKeyCreateForm

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "locations": location_list(org=self.org).order_by("name", "id")}

    def form_valid(self, form):
        try:
            with form.service_errors():
                key, plaintext = services.api_key_create(
                    org=self.org,
                    created_by=self.request.user,
                    name=form.cleaned_data["name"],
                    scope=form.cleaned_data["scope"],
                    location_ids=form.cleaned_data.get("location_ids") or None,
                )
        except EmailNotVerified as exc:  # said on the form, with the way to confirm (not the bare 403 page)
            form.add_error(None, exc.message)
            return self.render_to_response(self.get_context_data(form=form), status=403)
        if form.errors:
            return self.form_invalid(form)
        once.stash(self.request, NEW_API_KEY, key_id=str(key.pk), plaintext=plaintext)
        return redirect("dashboard:api-key-created")


class ApiKeyCreatedView(once.ShowOnceMixin, AdminRequiredMixin, TemplateView):
    """Shows a new key's plaintext exactly once (once.py)."""

    template_name = "dashboard/settings/api_key_created.html"
    once_kind = NEW_API_KEY
    once_gone_message = "A key is shown only once, right after it is created. Create a new one if needed."
    once_gone_url = "dashboard:api-keys"

    def get_once_context(self, pending):
        key = selectors.api_key_list(org=self.org).filter(pk=pending["key_id"]).first()
        return {"key": key} if key is not None else None


class ApiKeyRevokeView(AdminRequiredMixin, TemplateView):
    """GET asks for confirmation; POST revokes. Revocation is immediate for the API."""

    template_name = "dashboard/settings/api_key_revoke.html"

    def get_key(self):
        return get_for_org(selectors.api_key_list(org=self.org), self.org, self.kwargs["key_id"])

    def get(self, request, *args, **kwargs):
        return self.render_to_response(self.get_context_data(key=self.get_key()))

    def post(self, request, *args, **kwargs):
        key = self.get_key()
        if key.is_active:
            services.api_key_revoke(key=key, revoked_by=request.user)
            messages.success(request, f"Key “{key.name}” ({key.key_prefix}…) is revoked. Requests with it now get 401.")
        else:
            messages.info(request, f"Key “{key.name}” was already revoked.")
        return redirect("dashboard:api-keys")
