"""Middleware shared by every interface: request ids, the body-size edge, no CORS, JSON errors on the API.
The dashboard's own (sessions, log-in, messages, framing, htmx) is in browser_middleware."""

import logging
import time
import uuid

from django.conf import settings
from django.core.signals import request_finished
from django.dispatch import receiver
from django.http import JsonResponse

from api import fallbacks
from api.errors import error_body_for_status, is_api_path
from core import actors as audit_context
from core import dbreach, metrics

from .logging import SAFE_REQUEST_ID, request_id_var

logger = logging.getLogger("voiceagent.request")


class RequestIdMiddleware:
    """Gives every request an `X-Request-Id` (kept from the client when it is plain) for logs and responses."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        incoming = request.META.get("HTTP_X_REQUEST_ID", "")  # not request.headers: that copies every header
        request_id = incoming if SAFE_REQUEST_ID.fullmatch(incoming) else f"req_{uuid.uuid4().hex}"
        request.request_id = request_id
        # Not reset on the way out: Django logs 4xx/5xx ("Not Found: ...") after the middleware returns, and
        # those lines carry the id too. request_finished (below) clears it once the response is done.
        request_id_var.set(request_id)
        started = time.perf_counter()
        audit_token = audit_context.bind_request(request)  # who and whence, for the audit entries this request writes
        try:
            response = self.get_response(request)
        finally:
            audit_context.unbind_request(audit_token)
        response["X-Request-Id"] = request_id
        metrics.observe(request, response.status_code, time.perf_counter() - started)
        if settings.LOG_REQUESTS:
            _log_request(request, response, started)
        return response


def _log_request(request, response, started: float) -> None:
    """The request's one line: its route (the URL pattern, so no id or token of the path reaches the log), status,
    duration, and who asked (org id, the key's visible prefix)."""
    match = getattr(request, "resolver_match", None)
    key = getattr(request, "auth", None)
    org = getattr(request, "org", None) or getattr(key, "organization", None)
    logger.info("%s %s %s", request.method, match.route if match else "-", response.status_code, extra={
        "method": request.method,
        "route": match.route if match else None,
        "status": response.status_code,
        "duration_ms": round((time.perf_counter() - started) * 1000, 1),
        "org_id": str(org.pk) if org is not None else None,
        "key_prefix": getattr(key, "key_prefix", None),
    })


@receiver(request_finished, dispatch_uid="voiceagent.clear_request_id")
def _clear_request_id(**kwargs):
    request_id_var.set("-")


class BodySizeLimitMiddleware:
    """413 for bodies over 4.5 MB, decided from Content-Length before anything reads or parses the body; 414 for a
    path and query string over MAX_URL_LENGTH."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > settings.MAX_REQUEST_BODY_BYTES:
            # No `Connection: close` here: hop-by-hop headers are the server's (wsgiref refuses them outright).
            return JsonResponse(error_body_for_status(413), status=413)
        # gunicorn.conf.py lets request lines up to 8,190 bytes through, so this documented limit answers in JSON
        # before gunicorn's own HTML 414 would.
        if len(request.META.get("PATH_INFO", "")) + len(request.META.get("QUERY_STRING", "")) > settings.MAX_URL_LENGTH:
            return JsonResponse(error_body_for_status(414), status=414)
        return self.get_response(request)


class NoCorsMiddleware:
    """Spec rule 4: browsers cannot call the API cross-origin, so no Access-Control-Allow-* header ever leaves."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        for header in [h for h in response.headers if h.lower().startswith("access-control-allow-")]:
            del response[header]
        return response


class ApiErrorMiddleware:
    """Every failure under the API prefixes is the JSON of docs/api.md#errors: the router's 404, Django's 400/405, and
500s. Any page whose view could not reach PostgreSQL is a 503 with Retry-After (core/dbreach.py), never a 500.

    DRF views render their own errors through `api_exception_handler`; this catches what never reaches DRF.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (
            is_api_path(request.path)
            and response.status_code >= 400
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            replacement = JsonResponse(error_body_for_status(response.status_code), status=response.status_code)
            for header in ("Allow", "Retry-After", "WWW-Authenticate"):
                if header in response:
                    replacement[header] = response[header]
            return replacement
        return response

    def process_exception(self, request, exception):
        if dbreach.unreachable(exception):
            logger.warning("%s %s answered 503: PostgreSQL unreachable (%s)", request.method, request.path,
                           type(exception).__name__)
            return fallbacks.unavailable(request)
        if not is_api_path(request.path):
            return None
        logger.exception("Unhandled error on %s %s", request.method, request.path)
        return JsonResponse(error_body_for_status(500), status=500)


class ContentSecurityPolicyMiddleware:
    """Every HTML page gets settings.CONTENT_SECURITY_POLICY (scripts from this origin only), unless its view set a
    policy of its own (the API docs page: voiceagent/docs.py)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if "Content-Security-Policy" not in response and response.get("Content-Type", "").startswith("text/html"):
            response["Content-Security-Policy"] = settings.CONTENT_SECURITY_POLICY
        return response
