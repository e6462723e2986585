"""/v1/exports/<kind>.csv: a list's rows as one CSV download (core/csvexport.py), with the list's own filters.

An export view is its list view plus `ExportMixin`: it validates the list's query parameters (without `limit` and
`cursor`), selects through the list's own `rows(params)` and orders as the list pages, so a filter, a scope or an
organization's rule is written once for both. Each app keeps its kinds' columns beside it (`<app>/exports.py`).
"""

import functools

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.exceptions import Throttled

from core.csvexport import ExportsBusy, csv_response
from core.errors import NotFound, ValidationFailed

from .docs import error_responses
from .views import OrgAPIView

FORMAT = "csv"


@functools.cache
def export_params(list_params):
    """The list's query parameters without its paging: an export is every row that passes the filters."""
    return type(f"{list_params.__name__.removesuffix('Params')}ExportParams", (list_params,),
                {"limit": None, "cursor": None})


class ExportMixin:
    """Mixed into a list view (before it): GET answers the CSV. The list view gives `filter_params`, `time_field`
    and `rows(params)`; the export gives `export_name` and `columns()` (a list of core.csvexport.Column)."""

    export_name = ""
    http_method_names = ["get", "head", "options"]  # a list view's own writes (POST /v1/contacts) stay its own

    def columns(self) -> list:
        raise NotImplementedError

    def get(self, request, *args, **kwargs):
        return self.export()

    def export(self):
        params = self.validate_query(export_params(self.filter_params))
        rows = self.rows(params).order_by(f"-{self.time_field}", "-pk")  # the list's order
        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        try:
            return csv_response(rows, self.columns(), org=self.org, filename=f"{self.export_name}-{stamp}.{FORMAT}")
        except ExportsBusy as busy:
            raise Throttled(wait=busy.wait) from None


def export_get(name: str, list_params, description: str = ""):
    """An export view's `get`, with its OpenAPI operation (the list's filters, a CSV body): a function of its own
    for each view, since extend_schema annotates the function it is given."""

    def get(self, request, *args, **kwargs):
        return self.export()

    return extend_schema(
        operation_id=f"exports_{name}", summary=f"Export {name.replace('_', ' ')} as CSV", tags=["Exports"],
        parameters=[export_params(list_params)],
        description=(
            f"Every row `GET /v1/{name}` would list for the same filters (no `limit` or `cursor`), in the same order, "
            "as one UTF-8 CSV download streamed as it is read: a header row with the list item's field names, "
            "timestamps in ISO 8601 with their offset, lists and objects as JSON, null as an empty cell, and text "
            "that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@` or their full-width forms, "
            "after any leading whitespace, or with a tab, carriage return or line feed) prefixed with `'`. A download "
            "holds a web worker while it lasts, so an organization runs 1 export at a time "
            "(`EXPORTS_PER_ORG_AT_ONCE`, on every node together), at most one web worker in four of a node runs one, "
            "and once more than half of those do, the rest go to organizations that have not exported lately: over "
            f"any of these, 429 `rate_limited` with Retry-After and nothing is queried. {description}"
        ).strip(),
        responses={(200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="UTF-8 CSV with a header row."),
                   **error_responses(400)},
    )(get)


class ExportFallbackView(OrgAPIView):
    """/v1/exports/<anything else>: after the key (401/403 first, as everywhere), a known kind in another format is
    400 on `format`, and anything else is the 404 of an unknown path."""

    kinds: frozenset = frozenset()

    @extend_schema(exclude=True)  # each kind's own operation documents it
    def get(self, request, name):
        kind, dot, extension = name.rpartition(".")
        if dot and kind in self.kinds:
            raise ValidationFailed(field_errors={"format": [f"Unknown format '{extension}': exports are {FORMAT}."]})
        raise NotFound()
