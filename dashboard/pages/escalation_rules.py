"""Settings → Escalation rules: members read; admins create, edit, switch on and off, and delete, through
`knowledge.services.escalation_rule_*` (the same services as /v1/escalation-rules). Every change reaches
the agent on its next knowledge read."""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.views import View
from django.views.generic import TemplateView

from knowledge import selectors, services
from knowledge.models import EscalationRule

from ..forms import DashboardForm
from ..mixins import OrgMixin
from .knowledge_rows import KnowledgeDeleteView, KnowledgeFormView, KnowledgeRowMixin


class EscalationRuleForm(DashboardForm):
    EVERYWHERE = ""

    name = forms.CharField(max_length=200, help_text="Unique in your organization, e.g. “Allergy questions”.")
    description = forms.CharField(
        max_length=5000, required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text="What the agent listens for, in plain words (the runtime's classifier reads this).",
    )
    keywords = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}),
        help_text="One per line or comma-separated: words that hand the caller over when heard (up to 50).",
    )
    destination_type = forms.ChoiceField(label="Hand over to", choices=[("team_member", "A team member"),
                                                                        ("phone", "A phone number")])
    destination_team_member = forms.ChoiceField(label="Team member", required=False)
    destination_phone = forms.CharField(label="Phone number", max_length=32, required=False,
                                        widget=forms.TextInput(attrs={"type": "tel", "autocomplete": "off"}))
    location = forms.ChoiceField(label="Applies to", required=False)
    enabled = forms.BooleanField(required=False, initial=True, help_text="Off: the agent does not use the rule.")

    def __init__(self, *args, team_members=(), locations=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["destination_team_member"].choices = [("", "—")] + [
            (str(member.pk), member.name) for member in team_members
        ]
        self.fields["location"].choices = [(self.EVERYWHERE, "Every location")] + [
            (str(location.pk), location.name) for location in locations
        ]

    def clean_keywords(self):
        raw = self.cleaned_data["keywords"].replace(",", "\n")
        return [keyword.strip() for keyword in raw.splitlines() if keyword.strip()]

    def clean(self):
        data = super().clean()
        # The field the type does not use is sent as null, so switching the type in the form just works.
        if data.get("destination_type") == "team_member":
            data["destination_phone"] = None
        elif data.get("destination_type") == "phone":
            data["destination_team_member"] = None
        data["destination_team_member"] = data.get("destination_team_member") or None
        data["destination_phone"] = data.get("destination_phone") or None
        data["location"] = data.get("location") or None
        return data



class EscalationRuleListView(OrgMixin, TemplateView):
    template_name = "dashboard/settings/escalation_rules.html"

    def get_context_data(self, **kwargs):
        rules = (selectors.escalation_rule_list(org=self.org)
                 .select_related("destination_team_member", "location").order_by("name", "id"))
        return super().get_context_data(rules=rules, **kwargs)


class EscalationRuleFormMixin:
    location_manager_writes = True  # within their scope (mixins.OrgMixin)
    template_name = "dashboard/settings/escalation_rule_form.html"
    form_class = EscalationRuleForm
    list_url = "dashboard:escalation-rules"
    conflict = "A rule with this name already exists."
    missing = "That team member or location no longer exists."  # deleted while the form was open
    field_names = {"destination_team_member_id": "destination_team_member"}

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(),
                "team_members": selectors.team_member_list(org=self.org).order_by("name"),
                "locations": selectors.location_list(org=self.org).order_by("name")}

    def saved(self, rule) -> str:
        after = "The agent uses it from its next knowledge read." if rule.enabled else "It is off."
        return f"Escalation rule “{rule.name}” saved. {after}"


class EscalationRuleCreateView(EscalationRuleFormMixin, KnowledgeFormView):
    def write(self, form):
        return services.escalation_rule_create(org=self.org, actor=self.request.user, **form.cleaned_data)


class EscalationRuleMixin(KnowledgeRowMixin):
    location_manager_writes = True  # within their scope (mixins.OrgMixin)
    rows, url_kwarg, context_name = EscalationRule, "rule_id", "rule"


class EscalationRuleEditView(EscalationRuleFormMixin, EscalationRuleMixin, KnowledgeFormView):
    def get_initial(self):
        rule = self.get_row()
        return {"name": rule.name, "description": rule.description, "keywords": "\n".join(rule.keywords),
                "destination_type": rule.destination_type, "enabled": rule.enabled,
                "destination_team_member": str(rule.destination_team_member_id or ""),
                "destination_phone": rule.destination_phone or "", "location": str(rule.location_id or "")}

    def write(self, form):
        # The whole form: its clean() nulls the destination the type does not use, which the rule needs as one.
        return services.escalation_rule_update(rule=self.get_row(), actor=self.request.user, **form.cleaned_data)


class EscalationRuleEnabledView(EscalationRuleMixin, View):
    """POST `enabled=1|0`: switches the rule on or off for the agent."""

    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        rule = services.escalation_rule_update(rule=self.get_row(), actor=request.user,
                                               enabled=request.POST.get("enabled") == "1")
        messages.success(request, f"“{rule.name}” is {'on' if rule.enabled else 'off'} from the agent's next read.")
        return redirect("dashboard:escalation-rules")


class EscalationRuleDeleteView(EscalationRuleMixin, KnowledgeDeleteView):
    template_name = "dashboard/settings/escalation_rule_delete.html"
    list_url = "dashboard:escalation-rules"

    def delete(self, rule) -> None:
        services.escalation_rule_delete(rule=rule, actor=self.request.user)

    def deleted(self, rule) -> str:
        return f"Escalation rule “{rule.name}” deleted. Past escalations keep its name."
