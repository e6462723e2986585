"""The one renderer of API errors: every failure on /v1 becomes the spec's `{"error": ..., "details"?: ...}`."""

import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.settings import api_settings

from voiceagent.errors import DomainError

logger = logging.getLogger("voiceagent.api")

CODES_BY_STATUS = {
    400: "Validation failed",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    429: "rate_limited",
}


def error_body_for_status(status: int) -> dict:
    if status == 400:
        return validation_body(form_errors=["Bad request"])
    return {"error": CODES_BY_STATUS.get(status, "internal_error" if status >= 500 else "bad_request")}


def validation_body(*, form_errors=(), field_errors=None) -> dict:
    details = {"formErrors": list(form_errors), "fieldErrors": field_errors or {}}
    return {"error": "Validation failed", "details": details}


class InsufficientScope(exceptions.PermissionDenied):
    def __init__(self, required: str):
        super().__init__()
        self.required = required


def _messages(detail) -> list[str]:
    if isinstance(detail, dict):
        return [f"{key}: {message}" for key, value in detail.items() for message in _messages(value)]
    if isinstance(detail, list):
        return [message for item in detail for message in _messages(item)]
    return [str(detail)]


def _flatten(detail, prefix: str, out: dict[str, list[str]]) -> None:
    """Nested serializer errors become dotted field names (`items.0.name`), so fieldErrors stays one level."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            _flatten(value, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(detail, list) and any(isinstance(item, (dict, list)) for item in detail):
        for index, item in enumerate(detail):
            if item:
                _flatten(item, f"{prefix}.{index}", out)
    else:
        out.setdefault(prefix, []).extend(_messages(detail))


def validation_details(detail) -> dict:
    form_errors: list[str] = []
    field_errors: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            if key in (api_settings.NON_FIELD_ERRORS_KEY, "non_field_errors"):
                form_errors.extend(_messages(value))
            else:
                _flatten(value, str(key), field_errors)
    else:
        form_errors.extend(_messages(detail))
    return {"formErrors": form_errors, "fieldErrors": field_errors}


def api_exception_handler(exc, context):
    """DRF's EXCEPTION_HANDLER. Knows every failure type; anything unknown is a logged 500 without a trace."""
    headers = {}
    if isinstance(exc, DomainError):
        body = {"error": exc.code}
        if exc.details is not None:
            body["details"] = exc.details
        body.update(exc.extra)
        return Response(body, status=exc.status)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()

    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        return Response({"error": "unauthorized"}, status=401, headers={"WWW-Authenticate": "Bearer"})
    if isinstance(exc, InsufficientScope):
        return Response({"error": "insufficient_scope", "required": exc.required}, status=403)
    if isinstance(exc, exceptions.ValidationError):
        return Response({"error": "Validation failed", "details": validation_details(exc.detail)}, status=400)
    if isinstance(exc, exceptions.ParseError):
        return Response(validation_body(form_errors=[f"Malformed JSON body: {exc.detail}"]), status=400)
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return Response(validation_body(form_errors=["Content-Type must be application/json"]), status=400)
    if isinstance(exc, exceptions.Throttled):
        if exc.wait is not None:
            headers["Retry-After"] = str(max(1, int(-(-exc.wait // 1))))
        return Response({"error": "rate_limited"}, status=429, headers=headers)
    if isinstance(exc, exceptions.APIException):
        status = exc.status_code
        if isinstance(exc, exceptions.MethodNotAllowed):
            return Response({"error": "method_not_allowed"}, status=405)
        return Response(error_body_for_status(status), status=status)

    logger.exception("Unhandled API error", exc_info=exc)
    return Response({"error": "internal_error"}, status=500)
