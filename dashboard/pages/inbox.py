"""The inbox: callback requests, messages for team members and escalations, each with its call, and a button
that marks one handled (`calls.services.inbox.*_mark_handled`, recording who and when).

Marking handled is for every member, not only admins: members are the people who call back and pass messages
on. Another org's item id is the same 404 as a missing one.
"""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.generic import TemplateView, View

from calls import selectors
from calls.exports import FOLLOW_UP_COLUMNS
from calls.services.inbox import callback_mark_handled, escalation_mark_handled, message_mark_handled
from core.errors import NotFound

from ..downloads import csv_download
from ..forms import DashboardForm
from ..mixins import OrgMixin

SHOWN = 50  # per section; the count says how many there are in all
SECTIONS = (
    ("callback", "callbacks", "Callback requests"),
    ("message", "messages", "Messages"),
    ("escalation", "escalations", "Escalations"),
)
MARK_HANDLED = {
    "callback": (callback_mark_handled, "callback_id", "Callback request"),
    "message": (message_mark_handled, "message_id", "Message"),
    "escalation": (escalation_mark_handled, "escalation_id", "Escalation"),
}


class InboxFilterForm(DashboardForm):
    show = forms.ChoiceField(
        label="Show", required=False,
        choices=[("open", "Waiting"), ("handled", "Handled"), ("all", "All")],
    )

    def shown(self) -> str:
        """Which items: the choice made, else (none, or a bad one) the waiting ones."""
        return (self.cleaned_data["show"] if self.is_bound and self.is_valid() else "") or "open"


HANDLED = {"open": False, "handled": True, "all": None}


class InboxView(OrgMixin, TemplateView):
    """What waits on the team, newest first. Six queries whatever the size: a count and a page per section."""

    template_name = "dashboard/inbox/inbox.html"

    def get_context_data(self, **kwargs):
        form = InboxFilterForm(self.request.GET or None)
        show = form.shown()
        handled = HANDLED[show]
        sections = []
        for kind, anchor, title in SECTIONS:
            items = selectors.inbox_list(org=self.org, kind=kind, handled=handled)
            sections.append({"kind": kind, "anchor": anchor, "title": title, "count": items.count(),
                             "items": list(items[:SHOWN])})
        return super().get_context_data(form=form, show=show, sections=sections, shown=SHOWN, **kwargs)


class InboxExportView(OrgMixin, View):
    """One section's items as the inbox shows them (`show`) as CSV: the columns of its /v1 export."""

    def get(self, request, kind):
        if kind not in FOLLOW_UP_COLUMNS:
            raise NotFound()
        handled = HANDLED[InboxFilterForm(request.GET or None).shown()]
        items = selectors.inbox_list(org=self.org, kind=kind, handled=handled)
        return csv_download(request, self.org, f"{kind}s", items, FOLLOW_UP_COLUMNS[kind], back="dashboard:inbox")


class MarkHandledView(OrgMixin, View):
    """POST only: marks one item handled by the signed-in user, then back to the inbox (or `next`, if it is
    one of our own pages: the call page offers the same button)."""

    http_method_names = ["post"]

    def post(self, request, kind, item_id):
        if kind not in MARK_HANDLED:
            raise NotFound()
        service, id_arg, label = MARK_HANDLED[kind]
        _, changed = service(org=self.org, by=request.user, **{id_arg: item_id})
        if changed:
            messages.success(request, f"{label} marked handled.")
        else:
            messages.info(request, f"{label} was already handled.")
        return redirect(_safe_next(request) or f"{reverse('dashboard:inbox')}#{kind}s")


def _safe_next(request) -> str | None:
    target = request.POST.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                  require_https=request.is_secure()):
        return target
    return None
