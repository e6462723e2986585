"""/internal/agent/v1/: the agent runtime's API, authenticated by AGENT_RUNTIME_TOKEN; the org is in the path."""

from django.urls import path

from .views import (
    AvailabilityView,
    CallCompleteView,
    CallStartView,
    KnowledgeView,
    RecordingUploadView,
    ToolEventView,
)

urlpatterns = [
    path("orgs/<str:org_id>/knowledge", KnowledgeView.as_view(), name="runtime-knowledge"),
    path("orgs/<str:org_id>/calendars/<str:calendar_id>/availability", AvailabilityView.as_view(),
         name="runtime-calendar-availability"),
    path("orgs/<str:org_id>/calls", CallStartView.as_view(), name="runtime-call-start"),
    path("orgs/<str:org_id>/calls/<str:call_id>/events", ToolEventView.as_view(), name="runtime-call-events"),
    path("orgs/<str:org_id>/calls/<str:call_id>/complete", CallCompleteView.as_view(), name="runtime-call-complete"),
    path("orgs/<str:org_id>/calls/<str:call_id>/recording", RecordingUploadView.as_view(), name="runtime-recording"),
]
