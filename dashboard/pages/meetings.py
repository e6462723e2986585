"""Meetings (the meetings product): the list, a meeting's outcome (admins edit, approve, dispatch; members
read), and each dispatch's progress (polled in place with htmx while a dispatch is still open).

Built on the dashboard's `OrgMixin` (the org comes from the session membership). `MeetingsAccessMixin` adds the
product rule, then the admin rule: an org without the meetings product gets the 404 page for every URL here,
whoever asks; a member posting gets the 403 page and nothing changes (the services check again). The URLs keep
their own `meetings:` namespace under /meetings/ (dashboard/urls.py): `/meetings/{id}` is the event's `meeting_url`.
"""

import json

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.views.generic import FormView, TemplateView, View

from core import jsonparse
from core.errors import InvalidTransition, NotFound, ValidationFailed
from meetings import selectors, services
from meetings.errors import MeetingsProductOff
from meetings.models import Dispatch
from meetings.validation import NAME, TEXT

from ..forms import DashboardForm
from ..mixins import OrgMixin, error_page, is_admin_method

OPEN_STATES = (Dispatch.State.SENT, Dispatch.State.ACKED)


# The outcome editor: the title and summary as text, the four lists as JSON (the same shapes the event carries).
# The form checks only that the JSON parses; `meetings.services.outcome_update` decides the rest, and its dotted
# field errors (`tickets.0.title`) land beside the list they concern.


class _JSONList(forms.CharField):
    widget = forms.Textarea(attrs={"rows": 10, "spellcheck": "false", "class": "mono"})

    def to_python(self, value):
        value = super().to_python(value)
        try:
            return jsonparse.loads(value or "[]")
        except ValueError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc}") from None


class OutcomeForm(DashboardForm):
    JSON_FIELDS = ("tickets", "decisions", "open_questions", "action_items")

    title = forms.CharField(max_length=NAME, required=False)
    summary = forms.CharField(
        max_length=TEXT, widget=forms.Textarea(attrs={"rows": 5}), help_text="2 to 5 sentences."
    )
    tickets = _JSONList(
        required=False,
        help_text='A JSON array of {"title", "description", "acceptance_criteria": [..], "file_refs": '
        '[{"repo", "path"}], "confidence": 0..1, "assumptions": [..], "provenance"}.',
    )
    decisions = _JSONList(required=False, help_text='A JSON array of {"decision", "context"}.')
    open_questions = _JSONList(
        required=False, label="Open questions", help_text='A JSON array of {"question", "context"}.'
    )
    action_items = _JSONList(
        required=False, label="Action items", help_text='A JSON array of {"who", "what", "due": "YYYY-MM-DD" or null}.'
    )

    def apply_domain_error(self, exc):
        """Dotted paths from the outcome validator go to their top-level field, with the path in the message."""
        if not isinstance(exc, ValidationFailed):
            return super().apply_domain_error(exc)
        details = exc.details or {}
        for path, texts in details.get("fieldErrors", {}).items():
            top = path.split(".", 1)[0]
            for message in texts:
                if top in self.fields:
                    self.add_error(top, message if path == top else f"{path}: {message}")
                else:
                    self.add_error(None, f"{path}: {message}")
        for message in details.get("formErrors", []):
            self.add_error(None, message)
        return None



class MeetingsAccessMixin:
    """Runs inside OrgMixin.dispatch (list it after OrgMixin): 404 without the product, then 403 for a member
    using one of `meetings_admin_methods` (the mixin's rule: "POST" stands for every unsafe method). Meetings are
    the organization's as a whole: a member limited to locations gets the 403 page."""

    meetings_admin_methods: tuple[str, ...] = ("POST",)

    def dispatch(self, request, *args, **kwargs):
        if not self.org.meetings_enabled:
            raise NotFound()
        if self.membership.location_ids is not None or (
            is_admin_method(request.method, self.meetings_admin_methods) and not self.membership.is_admin
        ):
            return error_page(request, 403)
        return super().dispatch(request, *args, **kwargs)


class MeetingMixin(MeetingsAccessMixin):
    """The meeting of the URL, through the org's own rows (another org's id: the same 404 as a missing one)."""

    def get_meeting(self):
        if not hasattr(self, "_meeting"):
            self._meeting = selectors.meeting_get(org=self.org, meeting_id=self.kwargs["meeting_id"])
            if not hasattr(self._meeting, "outcome"):
                raise NotFound()
        return self._meeting

    def get_context_data(self, **kwargs):
        meeting = self.get_meeting()
        outcome = meeting.outcome
        dispatches = list(selectors.dispatch_list(outcome=outcome))
        is_admin = self.membership.is_admin
        context = super().get_context_data(**kwargs)
        context.update(
            meeting=meeting,
            outcome=outcome,
            dispatches=dispatches,
            polling=any(d.state in OPEN_STATES for d in dispatches),
            can_edit=is_admin and not dispatches,
            can_approve=is_admin and not outcome.is_approved,
            can_dispatch=is_admin and outcome.is_approved,
        )
        return context


class MeetingListView(OrgMixin, MeetingsAccessMixin, TemplateView):
    template_name = "dashboard/meetings/list.html"

    def get_context_data(self, **kwargs):
        return super().get_context_data(meetings=selectors.meeting_list(org=self.org), **kwargs)


class MeetingDetailView(OrgMixin, MeetingMixin, TemplateView):
    """The outcome as drafted or edited, its approval, the actions an admin may take, and the dispatches."""

    template_name = "dashboard/meetings/detail.html"


class DispatchProgressView(OrgMixin, MeetingMixin, TemplateView):
    """The dispatches fragment alone, for htmx to poll while a dispatch is still `sent` or `acked`."""

    template_name = "dashboard/meetings/_dispatches.html"


class OutcomeEditView(OrgMixin, MeetingMixin, FormView):
    """Admins only (members get 403 even for the form). Refused after the first dispatch."""

    template_name = "dashboard/meetings/edit.html"
    form_class = OutcomeForm
    meetings_admin_methods = ("GET", "HEAD", "POST")

    def get_initial(self):
        meeting = self.get_meeting()
        outcome = meeting.outcome
        initial = {"title": meeting.title or "", "summary": outcome.summary}
        for field in OutcomeForm.JSON_FIELDS:
            initial[field] = json.dumps(getattr(outcome, field), indent=2, ensure_ascii=False)
        return initial

    def form_valid(self, form):
        meeting = self.get_meeting()
        data = form.cleaned_data
        try:
            with form.service_errors():
                services.outcome_update(
                    outcome=meeting.outcome,
                    by=self.request.user,
                    title=data["title"],
                    summary=data["summary"],
                    **{field: data[field] for field in OutcomeForm.JSON_FIELDS},
                )
        except InvalidTransition as exc:
            messages.error(self.request, exc.message)
            return redirect("meetings:detail", meeting_id=meeting.pk)
        if form.errors:
            return self.form_invalid(form)
        messages.success(self.request, "Outcome saved. Approve it again before dispatching.")
        return redirect("meetings:detail", meeting_id=meeting.pk)


class OutcomeApproveView(OrgMixin, MeetingMixin, View):
    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        meeting = self.get_meeting()
        services.outcome_approve(outcome=meeting.outcome, by=request.user)
        messages.success(request, "Outcome approved. Dispatch it to send it to your webhook subscribers.")
        return redirect("meetings:detail", meeting_id=meeting.pk)


class OutcomeDispatchView(OrgMixin, MeetingMixin, View):
    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        meeting = self.get_meeting()
        try:
            services.outcome_dispatch(outcome=meeting.outcome, by=request.user)
        except InvalidTransition as exc:
            messages.error(request, exc.message)
        except MeetingsProductOff:
            raise NotFound() from None  # turned off meanwhile: the page is gone, as for every page of the product
        else:
            messages.success(request, "Dispatched: subscribers of meeting.outcome_approved will receive it.")
        return redirect("meetings:detail", meeting_id=meeting.pk)
