"""Team members (the people the agent takes messages for and escalates to): members read; admins create,
edit and delete through `knowledge.services.team_member_*`.

A team member who is a platform user (linked to a dashboard login) is shown locked and has no edit or delete
controls, for admins too, and the service refuses (403) a forged POST just as it refuses the API. That record
follows the login it mirrors; one rule for both interfaces is easier to reason about than an exception only
the dashboard knows.
"""

from django import forms
from django.views.generic import TemplateView

from core.errors import Forbidden
from knowledge import selectors, services
from knowledge.models import TeamMember

from ..forms import DashboardForm
from ..mixins import OrgMixin
from .knowledge_rows import KnowledgeDeleteView, KnowledgeFormView, KnowledgeRowMixin, changed


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
    list_url = "dashboard:team"

    def saved(self, member) -> str:
        return f"{member.name} saved. The agent knows the change from its next read."


class TeamMemberCreateView(TeamMemberFormMixin, KnowledgeFormView):
    def write(self, form):
        return services.team_member_create(org=self.org, actor=self.request.user, **form.cleaned_data)


class TeamMemberMixin(KnowledgeRowMixin):
    rows, url_kwarg, context_name = TeamMember, "member_id", "team_member"

    def get_row(self) -> TeamMember:
        member = super().get_row()
        if member.is_platform_user:
            raise Forbidden("A team member who is a platform user cannot be changed here.")
        return member


class TeamMemberEditView(TeamMemberFormMixin, TeamMemberMixin, KnowledgeFormView):
    def get(self, request, *args, **kwargs):
        self.get_row()  # a locked member: 403 before any form is shown
        return super().get(request, *args, **kwargs)

    def get_initial(self):
        member = self.get_row()
        return {field: getattr(member, field) or "" for field in TeamMemberForm.base_fields}

    def write(self, form):
        return services.team_member_update(member=self.get_row(), actor=self.request.user, **changed(form))


class TeamMemberDeleteView(TeamMemberMixin, KnowledgeDeleteView):
    """A member that escalation rules route to is kept: the list page names the rules."""

    template_name = "dashboard/team/delete.html"
    list_url = "dashboard:team"

    def delete(self, member) -> None:
        services.team_member_delete(member=member, actor=self.request.user)

    def deleted(self, member) -> str:
        return f"{member.name} removed from the team."
