"""Django's 404/500 handlers: JSON under the API prefixes, plain pages elsewhere."""

from django.http import HttpResponseNotFound, HttpResponseServerError, JsonResponse

from .errors import error_body_for_status, is_api_path


def not_found(request, exception=None):
    if is_api_path(request.path):
        return JsonResponse(error_body_for_status(404), status=404)
    return HttpResponseNotFound("<h1>Not found</h1>")


def server_error(request):
    if is_api_path(request.path):
        return JsonResponse(error_body_for_status(500), status=500)
    return HttpResponseServerError("<h1>Server error</h1>")
