"""Settings → Call fields: what the agent pulls out of each call. Members read; admins create, edit and delete,
through `knowledge.services.call_field_*` (the same services as /v1/call-fields). Every change reaches the agent
on its next knowledge read; past calls keep the name, label and value they were stored with."""

from django import forms
from django.views.generic import TemplateView

from knowledge import selectors, services
from knowledge.models import CallField

from ..forms import DashboardForm
from ..mixins import OrgMixin
from .knowledge_rows import KnowledgeDeleteView, KnowledgeFormView, KnowledgeRowMixin


class CallFieldForm(DashboardForm):
    name = forms.CharField(max_length=64, help_text="How the API and exports name it: lowercase letters, digits and "
                           "underscores, starting with a letter, e.g. party_size.")
    label = forms.CharField(max_length=200, help_text="What people read, e.g. “Party size”.")
    description = forms.CharField(
        max_length=1000, required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text="What the agent should listen for, in plain words.",
    )
    type = forms.ChoiceField(choices=CallField.Type.choices)
    choices = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}),
        help_text="For “One of a list” only: one choice per line (1 to 50).",
    )
    required = forms.BooleanField(required=False, help_text="The agent must report it on every real conversation.")
    location_ids = forms.MultipleChoiceField(
        label="Applies to", required=False, widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every location.",
    )

    def __init__(self, *args, locations=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["location_ids"].choices = [(str(location.pk), location.name) for location in locations]

    def clean(self):
        data = super().clean()
        # Choices belong to an enum only, so switching the type away from it in the form just works.
        lines = [line.strip() for line in (data.get("choices") or "").splitlines() if line.strip()]
        data["choices"] = lines if data.get("type") == CallField.Type.ENUM else []
        data["location_ids"] = data.get("location_ids") or None
        return data


class CallFieldListView(OrgMixin, TemplateView):
    template_name = "dashboard/settings/call_fields.html"

    def get_context_data(self, **kwargs):
        fields = list(selectors.call_field_list(org=self.org).order_by("name", "id"))
        names = dict(selectors.location_list(org=self.org).values_list("pk", "name"))
        for field in fields:
            field.location_names = None if field.location_ids is None else [
                names[pk] for pk in field.location_ids if pk in names]
        return super().get_context_data(call_fields=fields, **kwargs)


class CallFieldFormMixin:
    location_manager_writes = True  # within their scope (mixins.OrgMixin)
    template_name = "dashboard/settings/call_field_form.html"
    form_class = CallFieldForm
    list_url = "dashboard:settings-call-fields"

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "locations": selectors.location_list(org=self.org).order_by("name")}

    def saved(self, field) -> str:
        return f"Call field “{field.label}” saved. The agent listens for it from its next knowledge read."


class CallFieldCreateView(CallFieldFormMixin, KnowledgeFormView):
    def write(self, form):
        return services.call_field_create(org=self.org, actor=self.request.user, **form.cleaned_data)


class CallFieldMixin(KnowledgeRowMixin):
    location_manager_writes = True  # within their scope (mixins.OrgMixin)
    rows, url_kwarg, context_name = CallField, "field_id", "call_field"


class CallFieldEditView(CallFieldFormMixin, CallFieldMixin, KnowledgeFormView):
    def get_initial(self):
        field = self.get_row()
        return {"name": field.name, "label": field.label, "description": field.description, "type": field.type,
                "choices": "\n".join(field.choices), "required": field.required,
                "location_ids": [str(pk) for pk in field.location_ids or []]}

    def write(self, form):
        return services.call_field_update(call_field=self.get_row(), actor=self.request.user, **form.cleaned_data)


class CallFieldDeleteView(CallFieldMixin, KnowledgeDeleteView):
    template_name = "dashboard/settings/call_field_delete.html"
    list_url = "dashboard:settings-call-fields"

    def delete(self, field) -> None:
        services.call_field_delete(call_field=field, actor=self.request.user)

    def deleted(self, field) -> str:
        return f"Call field “{field.label}” deleted. Past calls keep the values they were stored with."
