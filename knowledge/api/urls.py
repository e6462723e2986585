from django.urls import path

from . import calendars, call_fields, escalation_rules, views

urlpatterns = [
    path("locations", views.LocationListView.as_view(), name="locations"),
    path("locations/<str:id>", views.LocationDetailView.as_view(), name="location"),
    path("facts", views.FactListView.as_view(), name="facts"),
    path("facts/<str:id>", views.FactDetailView.as_view(), name="fact"),
    path("team-members", views.TeamMemberListView.as_view(), name="team-members"),
    path("team-members/<str:id>", views.TeamMemberDetailView.as_view(), name="team-member"),
    path("calendars", calendars.CalendarListView.as_view(), name="calendars"),
    path("calendars/<str:id>", calendars.CalendarDetailView.as_view(), name="calendar"),
    path("escalation-rules", escalation_rules.EscalationRuleListView.as_view(), name="escalation-rules"),
    path("call-fields", call_fields.CallFieldListView.as_view(), name="call-fields"),
    path("call-fields/<str:id>", call_fields.CallFieldDetailView.as_view(), name="call-field"),
    path("escalation-rules/<str:id>", escalation_rules.EscalationRuleDetailView.as_view(), name="escalation-rule"),
]
