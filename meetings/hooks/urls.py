"""Token-authenticated hooks of the meetings product, included at /hooks/ (voiceagent/urls.py)."""

from django.urls import path

from .views import DispatchStatusView

urlpatterns = [
    path(
        "meeting-dispatches/<uuid:dispatch_id>/status", DispatchStatusView.as_view(), name="meeting-dispatch-status"
    ),
]
