"""What answers when nothing else does: Django's 404/500 handlers (JSON under the API prefixes, plain pages
elsewhere), and the view behind every /v1 path no route matches."""

import sys

from django.http import HttpResponse, HttpResponseNotFound, HttpResponseServerError, JsonResponse
from rest_framework import permissions
from rest_framework.views import APIView

from api.views import OrgAPIView
from core import dbreach
from core.errors import NotFound

from .errors import error_body_for_status, is_api_path, unavailable_headers


def not_found(request, exception=None):
    if is_api_path(request.path):
        return JsonResponse(error_body_for_status(404), status=404)
    return HttpResponseNotFound("<h1>Not found</h1>")


def unavailable(request):
    """503 with Retry-After: PostgreSQL cannot be reached right now (a restart, a failover), so nothing went wrong with
    the request itself and the client may send it again in a moment."""
    if is_api_path(request.path):
        response = JsonResponse(error_body_for_status(503), status=503)
    else:
        response = HttpResponse("<h1>Service unavailable</h1><p>Please try again in a moment.</p>", status=503)
    for name, value in unavailable_headers().items():
        response[name] = value
    return response


def server_error(request):
    """Django's 500 handler: it runs inside the `except` of whatever raised (a view, or a middleware below the one
    that catches view errors, such as the session's save), so an unreachable database is told apart here too."""
    if dbreach.unreachable(sys.exc_info()[1]):
        return unavailable(request)
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
