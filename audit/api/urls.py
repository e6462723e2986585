from django.urls import path

from . import views

urlpatterns = [
    path("audit-events", views.AuditEventListView.as_view(), name="audit-events"),
    path("audit-events/verify", views.AuditEventVerifyView.as_view(), name="audit-events-verify"),
    path("audit-events/verifications", views.AuditVerificationListView.as_view(), name="audit-verifications"),
    path("audit-events/verifications/<str:id>", views.AuditVerificationDetailView.as_view(),
         name="audit-verification"),
    path("audit-events/head", views.AuditHeadView.as_view(), name="audit-events-head"),
    path("audit-events/<str:id>", views.AuditEventDetailView.as_view(), name="audit-event"),
]
