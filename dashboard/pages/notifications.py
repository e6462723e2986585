"""Settings → Notifications: who gets e-mailed about callback requests, messages, escalations, webhook problems and
alerts, about the whole organization or only some of its locations. Members read the list; admins add (a team member
or a typed address, with checkboxes per kind), edit and remove, through `notifications.services` (which checks the
admin rule again).

One template, three modes: the list with the add form, the edit form, and the remove confirmation.
"""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.views.generic import FormView, TemplateView

from knowledge.models import TeamMember
from notifications import selectors, services
from notifications.models import KIND_FIELDS, EmailNotification, Kind, NotificationRecipient
from orgs.models import Location
from orgs.tenancy import get_for_org

from ..forms import DashboardForm
from ..mixins import AdminRequiredMixin, OrgMixin

TEMPLATE = "dashboard/settings/notifications.html"
RECENT_EMAILS = 20
KIND_HELP = {
    Kind.CALLBACK_REQUESTS: "A caller asked to be called back (sent the moment the agent records it).",
    Kind.MESSAGES: "Every message a caller leaves, also those for a named team member (who always gets their own).",
    Kind.ESCALATIONS: "A call was handed to a human by an escalation rule.",
    Kind.WEBHOOK_PROBLEMS: (
        "A webhook endpoint is failing, was disabled, recovered, or an event could not be delivered (admins always "
        "get these)."
    ),
    Kind.ALERTS: "An alert rule fired or its alert resolved (Alerts).",
}


class TeamMemberChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj):
        return f"{obj.name} <{obj.email}>" if obj.email else f"{obj.name} (no e-mail)"


class RecipientForm(DashboardForm):
    team_member = TeamMemberChoiceField(
        queryset=TeamMember.objects.none(), required=False, label="Team member",
        empty_label="— none: use the e-mail address below —",
        help_text="Mailed at the team member's current address.",
    )
    email = forms.EmailField(label="Or an e-mail address", max_length=254, required=False,
                             widget=forms.EmailInput(attrs={"autocomplete": "off"}))

    def __init__(self, *args, org, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team_member"].queryset = TeamMember.objects.for_org(org).order_by("name", "id")
        for kind in map(Kind, KIND_FIELDS):
            self.fields[kind.value] = forms.BooleanField(label=kind.label, required=False, help_text=KIND_HELP[kind])
        locations = Location.objects.for_org(org).order_by("name", "id")
        self.fields["location_ids"] = forms.MultipleChoiceField(
            label="Only about these locations", required=False, widget=forms.CheckboxSelectMultiple,
            choices=[(str(location.pk), location.name) for location in locations],
            help_text="A location manager hears about their locations only. None checked: the whole organization.",
        )
        if not self.fields["location_ids"].choices:
            del self.fields["location_ids"]

    def kind_fields(self):
        return [self[kind] for kind in KIND_FIELDS]


class RecipientFormMixin:
    form_class = RecipientForm

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "org": self.org}

    def form_valid(self, form):
        with form.service_errors():
            recipient = self.save(form)
        if form.errors:
            return self.form_invalid(form)
        messages.success(self.request, f"{recipient_label(recipient)} saved.")
        return redirect("dashboard:notifications")


def recipient_label(recipient: NotificationRecipient) -> str:
    return recipient.team_member.name if recipient.team_member_id else recipient.email


class NotificationsView(RecipientFormMixin, OrgMixin, FormView):
    """The list (everyone in the org) and the add form (POST: admins only)."""

    whole_org_only = True
    template_name = TEMPLATE
    admin_methods = ("POST",)

    def get_context_data(self, **kwargs):
        recent = EmailNotification.objects.for_org(self.org).order_by("-created_at", "-id")[:RECENT_EMAILS]
        return super().get_context_data(
            mode="list", recipients=selectors.recipient_list(org=self.org), kinds=Kind, recent_emails=recent,
            **kwargs,
        )

    def save(self, form):
        return services.recipient_create(org=self.org, by=self.request.user, **form.cleaned_data)


class RecipientMixin(AdminRequiredMixin):
    def get_recipient(self) -> NotificationRecipient:
        if not hasattr(self, "_recipient"):
            self._recipient = get_for_org(
                NotificationRecipient.objects.select_related("team_member"), self.org, self.kwargs["recipient_id"]
            )
        return self._recipient


class RecipientEditView(RecipientFormMixin, RecipientMixin, FormView):
    template_name = TEMPLATE

    def get(self, request, *args, **kwargs):
        self.get_recipient()  # another org's id: 404 before any form is shown
        return super().get(request, *args, **kwargs)

    def get_initial(self):
        recipient = self.get_recipient()
        return {"team_member": recipient.team_member_id, "email": recipient.email or "",
                "location_ids": [str(pk) for pk in recipient.location_ids or []],
                **{kind: getattr(recipient, kind) for kind in KIND_FIELDS}}

    def get_context_data(self, **kwargs):
        return super().get_context_data(mode="edit", recipient=self.get_recipient(), **kwargs)

    def save(self, form):
        return services.recipient_update(recipient=self.get_recipient(), by=self.request.user, **form.cleaned_data)


class RecipientDeleteView(RecipientMixin, TemplateView):
    template_name = TEMPLATE

    def get_context_data(self, **kwargs):
        return super().get_context_data(mode="delete", recipient=self.get_recipient(), **kwargs)

    def post(self, request, *args, **kwargs):
        recipient = self.get_recipient()
        services.recipient_delete(recipient=recipient, by=request.user)
        messages.success(request, f"{recipient_label(recipient)} no longer gets notifications.")
        return redirect("dashboard:notifications")
