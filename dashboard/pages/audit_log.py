"""Settings → Audit log (admins only): who did what, when and from where, filtered, each entry's changes as
before → after; and the CSV export of the filtered entries, streamed (constant memory for a million entries)."""

import json
from datetime import timedelta

from django import forms
from django.conf import settings
from django.http import HttpResponseBadRequest
from django.utils import timezone
from django.views.generic import TemplateView, View

from audit import selectors
from audit.actions import ACTIONS, PREFIXES
from audit.chain import timestamp
from core.csvexport import Column
from core.errors import ValidationFailed

from ..downloads import streamed
from ..forms import DayRangeForm
from ..mixins import AdminRequiredMixin

PAGE_SIZE = 50
# `occurred_at` in the text its hash covers (audit.chain.timestamp), so the CSV can be checked against the chain.
CSV_COLUMNS = [
    Column("id"),
    Column("occurred_at", render=timestamp),
    *(Column(name) for name in ("action", "actor_type", "actor_id", "actor_label", "target_type", "target_id",
                                "target_label")),
    Column("changes", render=lambda changes: json.dumps(changes, ensure_ascii=False, sort_keys=True)),
    *(Column(name) for name in ("ip", "user_agent", "request_id", "chain_seq", "hash")),
]


class AuditFilterForm(DayRangeForm):
    action = forms.ChoiceField(
        label="Action", required=False,
        choices=[("", "All actions"), *((p, f"{p[:-1]} (all)") for p in sorted(PREFIXES)),
                 *((a, a) for a in sorted(ACTIONS))],
    )
    actor = forms.CharField(label="Actor id", required=False, max_length=64)
    target = forms.CharField(label="Target id", required=False, max_length=64)

    def filters(self) -> dict:
        """`audit.selectors.audit_event_list` keyword arguments: whole local days (its `until` is inclusive)."""
        if not self.is_bound:
            return {}
        since, next_day = self.day_bounds()
        return {
            "action": self.cleaned_data.get("action") or None,
            "actor_id": self.cleaned_data.get("actor") or None,
            "target_id": self.cleaned_data.get("target") or None,
            "since": since,
            "until": next_day - timedelta(microseconds=1) if next_day else None,
        }


def _changes(entry) -> list[dict]:
    """Each changed field with its before and after, as text a person reads."""
    rows = []
    for field, pair in (entry.changes or {}).items():
        before, after = pair if isinstance(pair, list) and len(pair) == 2 else (None, pair)
        rows.append({"field": field, "before": _text(before), "after": _text(after)})
    return rows


def _text(value) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class AuditLogView(AdminRequiredMixin, TemplateView):
    """Newest first, 50 a page, one query a page: "Older" follows a signed cursor, never an OFFSET or a COUNT."""

    template_name = "dashboard/settings/audit_log.html"

    def get_context_data(self, **kwargs):
        params = self.request.GET.copy()
        cursor = params.pop("cursor", [None])[-1]
        form = AuditFilterForm(params or None)
        rows, next_cursor, valid = [], None, not form.is_bound or form.is_valid()
        if valid:
            entries = selectors.audit_event_list(org=self.org, **form.filters())
            try:
                page, _, next_cursor = selectors.audit_event_page(entries, limit=PAGE_SIZE, cursor=cursor,
                                                                  scope="dashboard")
            except ValidationFailed:  # an edited cursor: start from the newest
                page, _, next_cursor = selectors.audit_event_page(entries, limit=PAGE_SIZE, scope="dashboard")
            rows = [{"entry": entry, "changes": _changes(entry)} for entry in page]
        return super().get_context_data(
            form=form, rows=rows, valid=valid, filtered=form.is_bound, next_cursor=next_cursor,
            querystring=params.urlencode(), newer=bool(cursor), retention_days=settings.AUDIT_RETENTION_DAYS, **kwargs
        )


class AuditExportView(AdminRequiredMixin, View):
    """The filtered entries as CSV, newest first, streamed from a server-side cursor in chunks: memory stays flat
    whatever the number of entries."""

    def get(self, request, *args, **kwargs):
        form = AuditFilterForm(request.GET or None)
        if form.is_bound and not form.is_valid():
            return HttpResponseBadRequest("Fix the filters on the audit log page, then export again.",
                                          content_type="text/plain")
        entries = selectors.audit_event_list(org=self.org, **form.filters()).order_by("-occurred_at", "-id")
        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        return streamed(request, self.org, entries, CSV_COLUMNS, filename=f"audit-log-{stamp}.csv",
                        back="dashboard:audit-log")
