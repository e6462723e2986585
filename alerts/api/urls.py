from django.urls import path

from . import views

urlpatterns = [
    path("alert-rules", views.AlertRuleListView.as_view(), name="alert-rules"),
    path("alert-rules/<str:id>", views.AlertRuleDetailView.as_view(), name="alert-rule"),
    path("alerts", views.AlertListView.as_view(), name="alerts"),
    path("alerts/<str:id>", views.AlertDetailView.as_view(), name="alert"),
    path("alerts/<str:id>/acknowledge", views.AlertAcknowledgeView.as_view(), name="alert-acknowledge"),
]
