"""The "Export CSV" downloads of the dashboard's lists: the rows the page shows for its current filters (the page's
own form and selector), every one of them rather than a page, with the columns of the matching `/v1` export and
times in the organization's zone (core/csvexport.py streams them)."""

from django.http import HttpResponseBadRequest
from django.utils import timezone

from core.csvexport import csv_response


def csv_download(org, name: str, rows, columns):
    stamp = timezone.localtime().strftime("%Y%m%d-%H%M%S")
    return csv_response(rows, columns, filename=f"{name}-{stamp}.csv", tz=org.zone)


def fix_filters(page: str) -> HttpResponseBadRequest:
    """A link edited into filters the page refuses: nothing to export until the page shows them."""
    return HttpResponseBadRequest(f"Fix the filters on the {page} page, then export again.",
                                  content_type="text/plain")
