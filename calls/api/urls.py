from django.urls import path

from .trace import CallEventsView
from .views import CallDetailView, CallListView, CallRecordingView, OrderStatusView

urlpatterns = [
    path("calls", CallListView.as_view(), name="calls"),
    path("calls/<str:id>", CallDetailView.as_view(), name="call"),
    path("calls/<str:id>/recording", CallRecordingView.as_view(), name="call-recording"),
    path("calls/<str:id>/order-status", OrderStatusView.as_view(), name="call-order-status"),
    path("calls/<str:id>/events", CallEventsView.as_view(), name="call-events"),
]
