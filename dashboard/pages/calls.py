"""Calls: the filterable, paginated call history, and one call's page (transcript, checks, recording, order).

Reads go through `calls.selectors` (the same as `/v1/calls`), the recording URL through the same minting
function as `GET /v1/calls/{id}/recording`, and an order's status through `calls.services.orders.order_set_status`
with `source=team_via_dashboard`. Changing an order's status is for every member, not only admins: members are
the people running the phone line and the kitchen. The call page's URL is `/calls/<id>`, exactly the
`call_url` that `call.ended` carries (calls/payloads.py).
"""


from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect
from django.views.generic import TemplateView, View

from calls import recordings, selectors
from calls.evidence import evidence_marks
from calls.exports import call_columns
from calls.models import ORDER_TRANSITIONS, Call, CancelSource, Classification, OrderStatus
from calls.services.content import RECORDING, TRANSCRIPT, call_content_delete
from calls.services.orders import order_set_status
from core.errors import InvalidTransition
from orgs.models import Location

from ..downloads import csv_download, fix_filters
from ..forms import DashboardForm, DayRangeForm
from ..mixins import AdminRequiredMixin, OrgMixin
from .events import call_panel

PAGE_SIZE = 25
SCORABLE_CHOICES = [("", "Any"), ("yes", "Scorable"), ("no", "Unscorable")]
YES_NO_CHOICES = {
    "booked": [("", "Any"), ("yes", "Made a booking"), ("no", "No booking")],
    "unanswered": [("", "Any"), ("yes", "Left a question unanswered"), ("no", "None left unanswered")],
}
STATUS_ACTIONS = {
    OrderStatus.IN_PROGRESS: ("Start preparing", "btn--secondary"),
    OrderStatus.FULFILLED: ("Mark fulfilled", "btn--primary"),
    OrderStatus.CANCELED: ("Cancel order", "btn--danger-ghost"),
}


class CallFilterForm(DayRangeForm):
    """The list's filters. Every choice is checked: another org's location id or an unknown value is a form
    error shown beside the field, never a 500 and never a silently wider list."""

    location = forms.ModelChoiceField(label="Location", queryset=Location.objects.none(), required=False,
                                      empty_label="All locations")
    outcome = forms.ChoiceField(label="Outcome", required=False)
    disposition = forms.ChoiceField(
        label="Disposition", required=False, choices=[("", "Any"), *Call.Disposition.choices]
    )
    scorable = forms.ChoiceField(label="Scoring", required=False, choices=SCORABLE_CHOICES)
    classification = forms.ChoiceField(label="Classification", required=False,
                                       choices=[("", "Any"), *Classification.choices])
    booked = forms.ChoiceField(label="Bookings", required=False, choices=YES_NO_CHOICES["booked"])
    unanswered = forms.ChoiceField(label="Unanswered questions", required=False, choices=YES_NO_CHOICES["unanswered"])

    def __init__(self, *args, org, outcomes, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["location"].queryset = Location.objects.for_org(org).order_by("name")
        self.fields["outcome"].choices = [("", "Any"), *((o, o.replace("_", " ").capitalize()) for o in outcomes)]

    def selector_filters(self) -> dict:
        """`call_list` keyword arguments; dates are whole UTC days, `until` inclusive."""
        data = self.cleaned_data
        since, until = self.day_bounds()
        return {
            "since": since,
            "until": until,
            "location_id": data["location"].pk if data.get("location") else None,
            "outcome": data.get("outcome") or None,
            "disposition": data.get("disposition") or None,
            "scorable": {"yes": True, "no": False}.get(data.get("scorable") or ""),
            "classification": data.get("classification") or None,
            "has_booking": {"yes": True, "no": False}.get(data.get("booked") or ""),
            "has_unanswered_questions": {"yes": True, "no": False}.get(data.get("unanswered") or ""),
        }


def call_filter_form(org, params) -> CallFilterForm:
    """The list's filters as `params` (a QueryDict) set them: the page and its export read them alike."""
    outcomes = selectors.call_list(org=org).exclude(outcome__isnull=True).exclude(outcome="")
    outcomes = sorted(set(outcomes.order_by().values_list("outcome", flat=True).distinct()))
    return CallFilterForm(params or None, org=org, outcomes=outcomes)


class CallListView(OrgMixin, TemplateView):
    """The org's calls, newest first, 25 a page. Unscorable calls (robocalls, dialers, wrong numbers) are listed
    and marked. A constant number of queries: the filter choices, the count, and one page of rows."""

    template_name = "dashboard/calls/list.html"

    def get_context_data(self, **kwargs):
        params = self.request.GET.copy()
        params.pop("page", None)
        form = call_filter_form(self.org, params)
        filters = form.selector_filters() if form.is_bound and form.is_valid() else {}
        rows = []
        page = None
        if not form.is_bound or form.is_valid():
            calls = selectors.call_list(org=self.org, **filters).select_related("location", "contact")
            page = Paginator(calls.order_by("-started_at", "-id"), PAGE_SIZE).get_page(self.request.GET.get("page"))
            rows = page.object_list
        return super().get_context_data(
            form=form, page=page, calls=rows, filtered=bool(filters and any(v is not None for v in filters.values())),
            querystring=params.urlencode(), **kwargs,
        )


class CallExportView(OrgMixin, View):
    """The list's calls for its current filters as CSV (calls/exports.py's columns, call fields included)."""

    def get(self, request, *args, **kwargs):
        form = call_filter_form(self.org, request.GET.copy())
        if form.is_bound and not form.is_valid():
            return fix_filters("calls")
        filters = form.selector_filters() if form.is_bound else {}
        calls = selectors.call_list(org=self.org, **filters).order_by("-started_at", "-id")
        return csv_download(request, self.org, "calls", calls, call_columns(self.org), back="dashboard:calls")


def segments(text: str, marks: list[list[int]]) -> list[dict]:
    """Splits `text` into `[{text, check}]` segments along its evidence marks (calls/evidence.py: sorted, without
    overlaps), where `check` is the number of the quality check whose quoted evidence the segment is (None for plain
    text). Linear in the text. The template escapes every segment: nothing here is markup."""
    pieces, cursor = [], 0
    for start, end, check in marks:
        if start > cursor:
            pieces.append({"text": text[cursor:start], "check": None})
        pieces.append({"text": text[start:end], "check": check})
        cursor = end
    if cursor < len(text):
        pieces.append({"text": text[cursor:], "check": None})
    return pieces


def _first_turns(transcript: list[dict]) -> dict[tuple[int, str], int]:
    """(check number, quote with case and whitespace runs folded) -> the number of the first turn where that quote
    is marked as that check's evidence; one pass over the marked segments."""
    first: dict[tuple[int, str], int] = {}
    for turn in transcript:
        for segment in turn["segments"]:
            if segment["check"] is not None:
                first.setdefault((segment["check"], _folded(segment["text"])), turn["index"])
    return first


def _call_fields(call: Call, *, after: int) -> list[dict]:
    """The call's fields as stored, in the order of their names, each with `display` (its value as read) and
    `number`: where its verified quote is numbered in the evidence marks, after the `after` quality checks
    (calls.call_fields.evidence_pseudo_checks numbers them so), or None without one."""
    shown, number = [], after
    for name, entry in sorted((call.fields or {}).items()):
        value = entry.get("value")
        display = ("Yes" if value else "No") if isinstance(value, bool) else str(value)
        if entry.get("evidence"):
            number += 1
        shown.append({**entry, "name": name, "display": display,
                      "number": number if entry.get("evidence") else None, "turn": None})
    return shown


def _folded(quote: str) -> str:
    return " ".join(quote.lower().split())


class OrderStatusForm(DashboardForm):
    status = forms.ChoiceField(label="New status", choices=OrderStatus.choices)


class CallDetailView(OrgMixin, TemplateView):
    """One call: summary, the transcript as a conversation with the checks' evidence marked, the quality checks,
    the trail, the recording (a URL minted for this page view), the contact and, for an order, the order with
    its status control."""

    template_name = "dashboard/calls/detail.html"

    def get_call(self) -> Call:
        if not hasattr(self, "_call"):
            self._call = selectors.call_get(org=self.org, call_id=self.kwargs["call_id"])
        return self._call

    def get_context_data(self, **kwargs):
        call = self.get_call()
        order = selectors.call_order(call)
        recording = selectors.call_recording(call)
        checks = [{**check, "number": i} for i, check in enumerate(call.quality_checks or [], start=1)]
        verdicts = {check["number"]: check.get("verdict") for check in checks}
        # Stored at completion; a call stored without them (before they existed) is searched here, within the caps.
        marks = call.evidence_marks
        if marks is None:
            marks = evidence_marks(call.transcript or [], call.quality_checks or [])
        fields = _call_fields(call, after=len(checks))
        quoted_fields = {field["number"]: field for field in fields if field["number"] is not None}
        transcript = [
            {**turn, "index": i, "segments": [
                {**segment, "verdict": verdicts.get(segment["check"]), "field": quoted_fields.get(segment["check"])}
                for segment in segments(str(turn.get("text", "")), turn_marks)
            ]}
            for i, (turn, turn_marks) in enumerate(zip(call.transcript or [], marks, strict=True), start=1)
        ]
        first_turns = _first_turns(transcript)
        for check in checks:
            check["quotes"] = [{"text": q, "turn": first_turns.get((check["number"], _folded(q)))}
                               for q in check.get("evidence") or []]
        for field in fields:
            if field["number"] is not None:
                field["turn"] = first_turns.get((field["number"], _folded(field["evidence"])))
        actions = []
        if order is not None:
            actions = [
                {"status": status, "label": STATUS_ACTIONS[status][0], "style": STATUS_ACTIONS[status][1]}
                for status in (OrderStatus.IN_PROGRESS, OrderStatus.FULFILLED, OrderStatus.CANCELED)
                if status in ORDER_TRANSITIONS[order.status]
            ]
        kwargs.setdefault("status_form", OrderStatusForm(auto_id="id_order_%s"))
        return super().get_context_data(
            call=call, order=order, recording=recording,
            playback=recordings.playback(recording, base_url="") if recording is not None else None,
            checks=checks, transcript=transcript, actions=actions, call_fields=fields,
            unscorable=not call.scorable and call.is_completed,
            classification_label=Classification(call.classification).label if call.classification else None,
            sent=call_panel(self.org, call),
            bookings=call.bookings.select_related("calendar", "location").order_by("start_at"),
            **kwargs,
        )


class OrderStatusView(CallDetailView):
    """POST only: moves the call's order to `status` through `order_set_status`, as the signed-in user with
    `source=team_via_dashboard` (the event's `canceled_by` on a cancellation). A bad value or a move the order
    does not allow (e.g. a stale page after someone else fulfilled it) re-renders the call page with the error
    beside the control, and nothing changes. A call without an order is the 404 page (the API's 404 too)."""

    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        call = self.get_call()
        form = OrderStatusForm(request.POST, auto_id="id_order_%s")
        status = 400
        if form.is_valid():
            try:
                with form.service_errors():
                    order, changed = order_set_status(
                        call=call, status=form.cleaned_data["status"], changed_by=str(request.user.pk),
                        source=CancelSource.TEAM_VIA_DASHBOARD,
                    )
            except InvalidTransition as exc:
                form.add_error("status", exc.message)
                status = 409
            if not form.errors:
                label = f"Order #{order.call_order_number}"
                state = order.get_status_display().lower()
                if changed:
                    messages.success(request, f"{label} is now {state}.")
                else:
                    messages.info(request, f"{label} was already {state}: nothing changed.")
                return redirect("dashboard:call", call_id=call.pk)
        # Re-read the call so the page shows the order as it is now, not as it was before the attempt.
        del self._call
        return self.render_to_response(self.get_context_data(status_form=form), status=status)


DELETIONS = {
    "content": ([TRANSCRIPT, RECORDING], "Delete this call's content",
                "The transcript, the summary, the quality checks' quotes, the messages' text, the call fields' quotes, "
                "the unanswered questions, the order's answers and the recording are deleted for good, here, in the "
                "API and in the stored event bodies; subscribers get call.content_deleted. The call stays as a "
                "tombstone: times, outcome, score, order lines and totals, field values."),
    "recording": ([RECORDING], "Delete this call's recording",
                  "The audio is deleted for good (from storage too); subscribers get call.content_deleted."),
}


class CallContentDeleteView(AdminRequiredMixin, TemplateView):
    """Admins only: a confirmation page (GET), then the deletion (POST) through `call_content_delete`, with the
    reason `request`, as `DELETE /v1/calls/{id}/content` and `/recording` do."""

    template_name = "dashboard/calls/delete_content.html"

    def dispatch(self, request, *args, **kwargs):
        if kwargs["part"] not in DELETIONS:
            raise Http404
        return super().dispatch(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        call = selectors.call_get(org=self.org, call_id=self.kwargs["call_id"])
        _, title, explanation = DELETIONS[self.kwargs["part"]]
        kwargs.update(call=call, title=title, explanation=explanation)
        return super().get_context_data(**kwargs)

    def post(self, request, *args, **kwargs):
        call = selectors.call_get(org=self.org, call_id=kwargs["call_id"])
        parts, _, _ = DELETIONS[kwargs["part"]]
        gone = call_content_delete(call=call, parts=parts, reason="request")
        if gone:
            messages.success(request, f"Deleted: {', '.join(gone)}.")
        else:
            messages.info(request, "Nothing left to delete.")
        return redirect("dashboard:call", call_id=call.pk)
