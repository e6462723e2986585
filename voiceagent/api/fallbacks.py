"""Django's 404/500 handlers: JSON under the API prefixes, plain pages elsewhere."""

from django.http import HttpResponseNotFound, HttpResponseServerError, JsonResponse


def _is_api(request) -> bool:
    from voiceagent.middleware import is_api_path

    return is_api_path(request.path)


def not_found(request, exception=None):
    if _is_api(request):
        return JsonResponse({"error": "not_found"}, status=404)
    return HttpResponseNotFound("<h1>Not found</h1>")


def server_error(request):
    if _is_api(request):
        return JsonResponse({"error": "internal_error"}, status=500)
    return HttpResponseServerError("<h1>Server error</h1>")
