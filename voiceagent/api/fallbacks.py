"""What answers when nothing else does: Django's 404/500 handlers (JSON under the API prefixes, plain pages
elsewhere), and the view behind every /v1 path no route matches."""

from django.http import HttpResponseNotFound, HttpResponseServerError, JsonResponse
from rest_framework import permissions
from rest_framework.views import APIView

from core.api.views import OrgAPIView
from core.errors import NotFound

from .errors import error_body_for_status, is_api_path


def not_found(request, exception=None):
    if is_api_path(request.path):
        return JsonResponse(error_body_for_status(404), status=404)
    return HttpResponseNotFound("<h1>Not found</h1>")


def server_error(request):
    if is_api_path(request.path):
        return JsonResponse(error_body_for_status(500), status=500)
    return HttpResponseServerError("<h1>Server error</h1>")


class IsKeyed(permissions.BasePermission):
    def has_permission(self, request, view):
        return request.auth is not None  # without a key DRF answers 401, the authenticator being there


class UnknownEndpointView(OrgAPIView):
    """Every /v1 path no route matches, whatever the method: authenticated and counted like any keyed request, then
    404, so an unknown path tells nothing to a caller without a key (401) and carries the RateLimit headers."""

    permission_classes = [IsKeyed]
    schema = None

    def initial(self, request, *args, **kwargs):
        APIView.initial(self, request, *args, **kwargs)
        raise NotFound()
