"""The one renderer of API errors: every failure on the API prefixes becomes `{"error", "details"?}`
(docs/api.md#errors).

DRF views answer through `api_exception_handler`; what never reaches DRF (the router's 404, Django's 400/405, the
body-size edge, unhandled exceptions) is answered by the middleware and the fallback handlers with the same
bodies. Every body is built by `core.errors.error_body`.
"""

import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.settings import api_settings

from core import dbreach
from core.errors import DomainError, ValidationFailed, error_body
from core.sensitive import DEFAULT_KINDS, Policy, redact_text

logger = logging.getLogger("api")

# The machine interfaces: /v1, the agent runtime's /internal/, and the token-authenticated /hooks/.
API_PREFIXES = ("/v1/", "/internal/", "/hooks/")

CODES_BY_STATUS = {
    400: "Validation failed",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    414: "uri_too_long",
    429: "rate_limited",
    503: "service_unavailable",
}


def unavailable_headers() -> dict:
    """The headers of a 503 answered because PostgreSQL cannot be reached (core/dbreach.py)."""
    return {"Retry-After": str(dbreach.RETRY_AFTER_SECONDS)}


def is_api_path(path: str) -> bool:
    """Whether a failure on `path` is answered as JSON (the API prefixes) rather than as a page."""
    return path.startswith(API_PREFIXES) or path == "/v1"


def error_body_for_status(status: int) -> dict:
    """The body for a bare status, where nothing more is known (Django's own 400/404/405/500, the 413 edge)."""
    if status == 400:
        return ValidationFailed(form_errors=["Bad request"]).body()
    return error_body(CODES_BY_STATUS.get(status, "internal_error" if status >= 500 else "bad_request"))


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


def _position(segment: str) -> str:
    return f"Item {segment}" if segment.isdigit() else segment


def by_field_name(field_errors: dict[str, list[str]]) -> dict[str, list[str]]:
    """`fieldErrors` keyed by top-level field names, as the contract's `fieldErrors` (Zod's `flatten()`) is: a
    problem deeper in a field (`keywords.0`, `outcome.tickets.0.title`) is reported under the field it is in, with
    the rest of its path leading the message (`Item 0: ...`, `tickets: Item 0: title: ...`)."""
    named: dict[str, list[str]] = {}
    for path, messages in field_errors.items():
        top, _, rest = str(path).partition(".")
        lead = "".join(f"{_position(segment)}: " for segment in rest.split(".")) if rest else ""
        named.setdefault(top, []).extend(lead + message for message in messages)
    return named


def _flatten(detail, prefix: str, out: dict[str, list[str]]) -> None:
    """Nested serializer errors become dotted paths (`items.0.name`); `by_field_name` then names their field."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            _flatten(value, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(detail, list) and any(isinstance(item, (dict, list)) for item in detail):
        for index, item in enumerate(detail):
            if item:
                _flatten(item, f"{prefix}.{index}", out)
    else:
        out.setdefault(prefix, []).extend(_messages(detail))


def validation_failed(detail) -> ValidationFailed:
    """A serializer's errors as docs/api.md#errors's `formErrors` (the body's own) and `fieldErrors` (dotted paths until
    rendered: `_render` names their fields)."""
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
    return ValidationFailed(form_errors=form_errors, field_errors=field_errors)


def _validation_body(exc: ValidationFailed) -> dict:
    """The one place a validation failure becomes its body on the machine interfaces: services and serializers
    report dotted paths (the dashboard shows them beside the field they concern), clients get field names."""
    details = exc.details or {}
    field_errors = {name: [_unechoed(message) for message in messages]
                    for name, messages in by_field_name(details.get("fieldErrors") or {}).items()}
    return ValidationFailed(form_errors=[_unechoed(message) for message in details.get("formErrors") or []],
                            field_errors=field_errors).body()


# Some messages quote the value refused ('"x" is not a valid choice.'): a card, government id or bank account
# number a runtime put in the wrong field is not sent back, nor logged by whoever logs the answer.
_ECHO_POLICY = Policy(kinds=frozenset(DEFAULT_KINDS))


def _unechoed(message):
    if not isinstance(message, str) or not any(character.isdigit() for character in message):
        return message
    return redact_text(message, _ECHO_POLICY)


def api_exception_handler(exc, context):
    """DRF's EXCEPTION_HANDLER. Knows every failure type; anything unknown is a 500 without a trace. Every answer
    of 500 or more is logged here, whatever raised it (a `DomainError` such as webhooks' UnknownEventType too)."""
    body, status, headers = _render(exc)
    if status == 503:
        logger.warning("API request answered 503: PostgreSQL unreachable (%s)", type(exc).__name__)
    elif status >= 500:
        logger.error("API error answered %s: %s", status, type(exc).__name__, exc_info=exc)
    return Response(body, status=status, headers=headers)


def _render(exc) -> tuple[dict, int, dict]:
    """(body, status, headers) for one failure."""
    if isinstance(exc, ValidationFailed):
        return _validation_body(exc), exc.status, {}
    if dbreach.unreachable(exc):
        return error_body_for_status(503), 503, unavailable_headers()
    if isinstance(exc, DomainError):
        return exc.body(), exc.status, {}
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()

    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        return error_body("unauthorized"), 401, {"WWW-Authenticate": "Bearer"}
    if isinstance(exc, InsufficientScope):
        return error_body("insufficient_scope", required=exc.required), 403, {}
    if isinstance(exc, exceptions.ValidationError):
        return _validation_body(validation_failed(exc.detail)), 400, {}
    if isinstance(exc, exceptions.ParseError):
        return ValidationFailed(form_errors=[f"Malformed JSON body: {exc.detail}"]).body(), 400, {}
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return ValidationFailed(form_errors=["Content-Type must be application/json"]).body(), 400, {}
    if isinstance(exc, exceptions.Throttled):
        headers = {"Retry-After": str(max(1, int(-(-exc.wait // 1))))} if exc.wait is not None else {}
        return error_body("rate_limited"), 429, headers
    if isinstance(exc, exceptions.MethodNotAllowed):
        return error_body("method_not_allowed"), 405, {}
    if isinstance(exc, exceptions.APIException):
        return error_body_for_status(exc.status_code), exc.status_code, {}
    return error_body("internal_error"), 500, {}
