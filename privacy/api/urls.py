from django.urls import path

from .views import (
    ErasureRequestDetailView,
    ErasureRequestListView,
    RetentionView,
    SuppressionDetailView,
    SuppressionListView,
)

urlpatterns = [
    path("privacy/retention", RetentionView.as_view(), name="privacy-retention"),
    path("privacy/erasure-requests", ErasureRequestListView.as_view(), name="privacy-erasure-requests"),
    path("privacy/erasure-requests/<str:id>", ErasureRequestDetailView.as_view(), name="privacy-erasure-request"),
    path("privacy/suppressions", SuppressionListView.as_view(), name="privacy-suppressions"),
    path("privacy/suppressions/<str:id>", SuppressionDetailView.as_view(), name="privacy-suppression"),
]
