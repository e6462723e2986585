"""The meetings runtime's internal endpoints, included under /internal/agent/v1/ (voiceagent/urls.py)."""

from django.urls import path

from .views import MeetingIngestView

urlpatterns = [
    path("orgs/<uuid:org_id>/meetings", MeetingIngestView.as_view(), name="runtime-meeting-ingest"),
]
