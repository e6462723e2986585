"""/v1/exports/{calls,bookings,orders,callbacks,messages,escalations}.csv: each list's rows as CSV, through the list
view's own parameters and `rows()` (api/exports.py), with the columns of calls/exports.py."""

from api.exports import ExportMixin, export_get
from calls import exports

from .bookings import BookingListView, BookingParams
from .followups import FOLLOW_UP_VIEWS, KINDS, FollowUpParams, OrderListView, OrderParams
from .views import CallListParams, CallListView


class CallExportView(ExportMixin, CallListView):
    export_name = "calls"
    get = export_get("calls", CallListParams)

    def columns(self):
        return exports.call_columns(self.org)


class BookingExportView(ExportMixin, BookingListView):
    export_name = "bookings"
    get = export_get("bookings", BookingParams)

    def columns(self):
        return exports.BOOKING_COLUMNS


class OrderExportView(ExportMixin, OrderListView):
    export_name = "orders"
    get = export_get("orders", OrderParams)

    def columns(self):
        return exports.ORDER_COLUMNS


def _follow_up_export(kind: str, list_view):
    name = KINDS[kind][0]
    return type(f"{list_view.__name__.removesuffix('ListView')}ExportView", (ExportMixin, list_view), {
        "export_name": name,
        "get": export_get(name, FollowUpParams),
        "columns": lambda self: exports.FOLLOW_UP_COLUMNS[self.kind],
    })


FOLLOW_UP_EXPORTS = {name: _follow_up_export(list_view.kind, list_view) for name, list_view, _ in FOLLOW_UP_VIEWS}
EXPORT_VIEWS = {"calls": CallExportView, "bookings": BookingExportView, "orders": OrderExportView,
                **FOLLOW_UP_EXPORTS}
