from django.urls import path

from .analytics import CallAnalyticsView
from .bookings import BookingCancelView, BookingDetailView, BookingListView
from .exports import EXPORT_VIEWS
from .followups import FOLLOW_UP_VIEWS, OrderDetailView, OrderListView
from .trace import CallEventsView
from .views import CallContentView, CallDetailView, CallListView, CallRecordingView, OrderStatusView

urlpatterns = [
    path("calls", CallListView.as_view(), name="calls"),
    *(path(f"exports/{name}.csv", view.as_view(), name=f"export-{name}") for name, view in EXPORT_VIEWS.items()),
    path("calls/<str:id>", CallDetailView.as_view(), name="call"),
    path("calls/<str:id>/recording", CallRecordingView.as_view(), name="call-recording"),
    path("calls/<str:id>/content", CallContentView.as_view(), name="call-content"),
    path("calls/<str:id>/order-status", OrderStatusView.as_view(), name="call-order-status"),
    path("calls/<str:id>/events", CallEventsView.as_view(), name="call-events"),
    path("analytics/calls", CallAnalyticsView.as_view(), name="analytics-calls"),
    path("orders", OrderListView.as_view(), name="orders"),
    path("bookings", BookingListView.as_view(), name="bookings"),
    path("bookings/<str:id>", BookingDetailView.as_view(), name="booking"),
    path("bookings/<str:id>/cancel", BookingCancelView.as_view(), name="booking-cancel"),
    path("orders/<str:call_id>", OrderDetailView.as_view(), name="order"),
    *(
        route
        for name, list_view, detail_view in FOLLOW_UP_VIEWS
        for route in (
            path(name, list_view.as_view(), name=name),
            path(f"{name}/<str:id>", detail_view.as_view(), name=name[:-1]),
        )
    ),
]
