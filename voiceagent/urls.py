from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularJSONAPIView

from api import fallbacks
from api.exports import ExportFallbackView
from api.fallbacks import UnknownEndpointView
from core.metrics import metrics_view
from dashboard.urls import meetings_urls

from . import health
from .docs import ApiDocsView

EXPORT_KINDS = frozenset({"calls", "contacts", "bookings", "orders", "callbacks", "messages", "escalations"})
v1 = [
    path("", include("orgs.api.urls")),
    path("", include("knowledge.api.urls")),
    path("", include("contacts.api.urls")),
    path("", include("calls.api.urls")),
    path("", include("webhooks.api.urls")),
    path("", include("audit.api.urls")),
    path("", include("privacy.api.urls")),
    path("", include("alerts.api.urls")),
    # After every app's `exports/<kind>.csv`: another format of a kind is 400 on `format`, anything else 404.
    path("exports/<str:name>", ExportFallbackView.as_view(kinds=EXPORT_KINDS)),
]

urlpatterns = [
    path("v1/", include((v1, "v1"))),
    re_path(r"^v1(/|$)", UnknownEndpointView.as_view()),
    path("internal/agent/v1/", include("calls.runtime.urls")),
    path("internal/agent/v1/", include("meetings.runtime.urls")),
    path("hooks/", include("meetings.hooks.urls")),
    path("recordings/", include("calls.urls")),
    path("api/openapi.json", SpectacularJSONAPIView.as_view(), name="openapi-schema"),
    path("api/docs", ApiDocsView.as_view(url_name="openapi-schema"), name="api-docs"),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    path("meetings/", include(meetings_urls)),
    path("", include("dashboard.urls")),
]

if settings.ADMIN_ENABLED:
    urlpatterns.insert(-2, path("admin/", admin.site.urls))

handler404 = fallbacks.not_found
handler500 = fallbacks.server_error
