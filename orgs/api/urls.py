from django.urls import path

from . import views

urlpatterns = [
    path("me", views.MeView.as_view(), name="me"),
    path("locations", views.LocationListView.as_view(), name="locations"),
    path("locations/<str:id>", views.LocationDetailView.as_view(), name="location"),
    path("facts", views.FactListView.as_view(), name="facts"),
    path("facts/<str:id>", views.FactDetailView.as_view(), name="fact"),
    path("team-members", views.TeamMemberListView.as_view(), name="team-members"),
    path("team-members/<str:id>", views.TeamMemberDetailView.as_view(), name="team-member"),
]
