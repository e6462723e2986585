from django.urls import path

from . import views

urlpatterns = [
    path("audit-events", views.AuditEventListView.as_view(), name="audit-events"),
    path("audit-events/verify", views.AuditEventVerifyView.as_view(), name="audit-events-verify"),
    path("audit-events/<str:id>", views.AuditEventDetailView.as_view(), name="audit-event"),
]
