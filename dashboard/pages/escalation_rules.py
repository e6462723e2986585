"""Settings → Escalation rules: members read; admins create, edit, switch on and off, and delete, through
`calls.services.configuration.escalation_rule_*` (the same services as /v1/escalation-rules). Every change reaches
the agent on its next knowledge read."""

from django.contrib import messages
from django.shortcuts import redirect
from django.views import View
from django.views.generic import FormView, TemplateView

from calls.models import EscalationRule
from calls.services import configuration
from orgs import selectors as org_selectors
from orgs.tenancy import get_for_org
from voiceagent.errors import Conflict, NotFound, ValidationFailed

from ..forms import EscalationRuleForm
from ..mixins import AdminRequiredMixin, OrgMixin


class EscalationRuleListView(OrgMixin, TemplateView):
    template_name = "dashboard/settings/escalation_rules.html"

    def get_context_data(self, **kwargs):
        rules = (EscalationRule.objects.for_org(self.org)
                 .select_related("destination_team_member", "location").order_by("name", "id"))
        return super().get_context_data(rules=rules, **kwargs)


class EscalationRuleFormMixin(AdminRequiredMixin):
    template_name = "dashboard/settings/escalation_rule_form.html"
    form_class = EscalationRuleForm

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(),
                "team_members": org_selectors.team_member_list(org=self.org).order_by("name"),
                "locations": org_selectors.location_list(org=self.org).order_by("name")}

    def form_valid(self, form):
        try:
            rule = self.save(form.cleaned_data)
        except (ValidationFailed, Conflict, NotFound) as exc:
            if isinstance(exc, NotFound):  # a team member or location deleted while the form was open
                exc = ValidationFailed(form_errors=["That team member or location no longer exists."])
            elif isinstance(exc, Conflict):
                exc.message = "A rule with this name already exists."
            if isinstance(exc, ValidationFailed):
                fields = exc.details.get("fieldErrors", {})
                if "destination_team_member_id" in fields:
                    fields["destination_team_member"] = fields.pop("destination_team_member_id")
            form.apply_domain_error(exc)
            return self.form_invalid(form)
        after = "The agent uses it from its next knowledge read." if rule.enabled else "It is off."
        messages.success(self.request, f"Escalation rule “{rule.name}” saved. {after}")
        return redirect("dashboard:escalation-rules")


class EscalationRuleCreateView(EscalationRuleFormMixin, FormView):
    def save(self, data):
        return configuration.escalation_rule_create(org=self.org, **data)


class EscalationRuleMixin(AdminRequiredMixin):
    def get_rule(self) -> EscalationRule:
        if not hasattr(self, "_rule"):
            self._rule = get_for_org(EscalationRule, self.org, self.kwargs["rule_id"])
        return self._rule


class EscalationRuleEditView(EscalationRuleFormMixin, EscalationRuleMixin, FormView):
    def get_initial(self):
        rule = self.get_rule()
        return {"name": rule.name, "description": rule.description, "keywords": "\n".join(rule.keywords),
                "destination_type": rule.destination_type, "enabled": rule.enabled,
                "destination_team_member": str(rule.destination_team_member_id or ""),
                "destination_phone": rule.destination_phone or "", "location": str(rule.location_id or "")}

    def get_context_data(self, **kwargs):
        return super().get_context_data(rule=self.get_rule(), **kwargs)

    def save(self, data):
        rule = self.get_rule()
        try:
            return configuration.escalation_rule_update(rule=rule, **data)
        except (ValidationFailed, Conflict, NotFound):
            rule.refresh_from_db()  # the service set the refused values on this instance
            raise


class EscalationRuleEnabledView(EscalationRuleMixin, View):
    """POST `enabled=1|0`: switches the rule on or off for the agent."""

    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        rule = configuration.escalation_rule_update(rule=self.get_rule(), enabled=request.POST.get("enabled") == "1")
        messages.success(request, f"“{rule.name}” is {'on' if rule.enabled else 'off'} from the agent's next read.")
        return redirect("dashboard:escalation-rules")


class EscalationRuleDeleteView(EscalationRuleMixin, TemplateView):
    template_name = "dashboard/settings/escalation_rule_delete.html"

    def get_context_data(self, **kwargs):
        return super().get_context_data(rule=self.get_rule(), **kwargs)

    def post(self, request, *args, **kwargs):
        rule = self.get_rule()
        configuration.escalation_rule_delete(rule=rule)
        messages.success(request, f"Escalation rule “{rule.name}” deleted. Past escalations keep its name.")
        return redirect("dashboard:escalation-rules")
