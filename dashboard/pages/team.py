"""Team members (the people the agent takes messages for and escalates to): members read; admins create,
edit and delete through `orgs.services.team_member_*`.

A team member who is a platform user (linked to a dashboard login) is shown locked and has no edit or delete
controls, for admins too, and the service refuses (403) a forged POST just as it refuses the API. That record
follows the login it mirrors; one rule for both interfaces is easier to reason about than an exception only
the dashboard knows.
"""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.views.generic import FormView, TemplateView

from knowledge import selectors, services
from knowledge.models import TeamMember
from orgs.tenancy import get_for_org
from voiceagent.errors import Conflict, Forbidden, ValidationFailed

from ..forms import DashboardForm
from ..mixins import AdminRequiredMixin, OrgMixin


class TeamMemberForm(DashboardForm):
    name = forms.CharField(max_length=200)
    role = forms.CharField(max_length=200, required=False, help_text="E.g. “Manager” or “Head chef”.")
    email = forms.EmailField(max_length=254, required=False)
    phone_number = forms.CharField(
        label="Phone number", max_length=32, required=False,
        widget=forms.TextInput(attrs={"type": "tel", "autocomplete": "off"}),
    )



class TeamListView(OrgMixin, TemplateView):
    template_name = "dashboard/team/list.html"

    def get_context_data(self, **kwargs):
        members = selectors.team_member_list(org=self.org).order_by("name", "id")
        return super().get_context_data(team_members=members, **kwargs)


class TeamMemberFormMixin:
    template_name = "dashboard/team/form.html"
    form_class = TeamMemberForm

    def form_valid(self, form):
        try:
            member = self.save(form)
        except (ValidationFailed, Conflict) as exc:
            form.apply_domain_error(exc)
            return self.form_invalid(form)
        messages.success(self.request, f"{member.name} saved. The agent knows the change from its next read.")
        return redirect("dashboard:team")


class TeamMemberCreateView(TeamMemberFormMixin, AdminRequiredMixin, FormView):
    def save(self, form):
        return services.team_member_create(org=self.org, **form.cleaned_data)


class TeamMemberMixin(AdminRequiredMixin):
    def get_member(self) -> TeamMember:
        if not hasattr(self, "_member"):
            self._member = get_for_org(TeamMember, self.org, self.kwargs["member_id"])
            if self._member.is_platform_user:
                raise Forbidden("A team member who is a platform user cannot be changed here.")
        return self._member


class TeamMemberEditView(TeamMemberFormMixin, TeamMemberMixin, FormView):
    def get(self, request, *args, **kwargs):
        self.get_member()  # a locked member: 403 before any form is shown
        return super().get(request, *args, **kwargs)

    def get_initial(self):
        member = self.get_member()
        return {field: getattr(member, field) or "" for field in TeamMemberForm.base_fields}

    def get_context_data(self, **kwargs):
        return super().get_context_data(team_member=self.get_member(), **kwargs)

    def save(self, form):
        member = self.get_member()
        changes = {field: form.cleaned_data[field] for field in form.changed_data}
        try:
            return services.team_member_update(member=member, **changes) if changes else member
        except (ValidationFailed, Conflict):
            member.refresh_from_db()  # the service set the refused values on this instance
            raise


class TeamMemberDeleteView(TeamMemberMixin, TemplateView):
    template_name = "dashboard/team/delete.html"

    def get_context_data(self, **kwargs):
        return super().get_context_data(team_member=self.get_member(), **kwargs)

    def post(self, request, *args, **kwargs):
        member = self.get_member()
        try:
            services.team_member_delete(member=member)
        except Conflict as exc:  # escalation rules route to them: the page names the rules
            messages.error(request, str(exc))
            return redirect("dashboard:team")
        messages.success(request, f"{member.name} removed from the team.")
        return redirect("dashboard:team")
