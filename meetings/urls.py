"""Dashboard pages of the meetings product, included at /meetings/ (voiceagent/urls.py).

A meeting's page is `/meetings/{id}` without a trailing slash: the event's `meeting_url` points at it exactly.
"""

from django.urls import path

from . import views

app_name = "meetings"

urlpatterns = [
    path("", views.MeetingListView.as_view(), name="list"),
    path("<uuid:meeting_id>", views.MeetingDetailView.as_view(), name="detail"),
    path("<uuid:meeting_id>/edit", views.OutcomeEditView.as_view(), name="edit"),
    path("<uuid:meeting_id>/approve", views.OutcomeApproveView.as_view(), name="approve"),
    path("<uuid:meeting_id>/dispatch", views.OutcomeDispatchView.as_view(), name="dispatch"),
    path("<uuid:meeting_id>/dispatches", views.DispatchProgressView.as_view(), name="dispatches"),
]
