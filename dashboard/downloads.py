"""The "Export CSV" downloads of the dashboard's lists: the rows the page shows for its current filters (the page's
own form and selector), every one of them rather than a page, with the columns of the matching `/v1` export and
times in the organization's zone (core/csvexport.py streams them).

A download holds a web worker, so it takes one of the organization's export places (core/csvexport.py, the same
as the API's): without one, back to the page it was asked from, with its filters and a message saying when to try
again, never an error page."""

from datetime import UTC

from django.contrib import messages
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone

from core.csvexport import ExportsBusy, csv_response


def csv_download(request, org, name: str, rows, columns, *, back: str):
    """`rows` as `<name>-<local time>.csv`, times in the organization's zone; `back`: the list page's URL name."""
    stamp = timezone.localtime().strftime("%Y%m%d-%H%M%S")
    return streamed(request, org, rows, columns, filename=f"{name}-{stamp}.csv", back=back, tz=org.zone)


def streamed(request, org, rows, columns, *, filename: str, back: str, tz=UTC):
    try:
        return csv_response(rows, columns, org=org, filename=filename, tz=tz)
    except ExportsBusy as busy:
        who = ("An export of your organization is running" if busy.scope == "organization"
               else "Too many exports are running right now")
        messages.error(request, f"{who}: try again in {busy.wait} s.")
        query = request.GET.urlencode()
        return redirect(reverse(back) + (f"?{query}" if query else ""))


def fix_filters(page: str) -> HttpResponseBadRequest:
    """A link edited into filters the page refuses: nothing to export until the page shows them."""
    return HttpResponseBadRequest(f"Fix the filters on the {page} page, then export again.",
                                  content_type="text/plain")
