"""Typed domain errors and the one builder of error bodies. Services raise these; the API and the dashboard decide
how to show them, and every `{"error", "details"?}` body on any interface comes from `error_body`."""


def error_body(code: str, details: dict | None = None, **extra) -> dict:
    """The error body of docs/api.md#errors: `{"error": code}`, `details` when given, then any top-level extras
    (`required`)."""
    body = {"error": code}
    if details is not None:
        body["details"] = details
    body.update(extra)
    return body


class DomainError(Exception):
    """A failure a client can act on: an HTTP status, a stable `error` code and optional details."""

    status = 400
    code = "bad_request"

    def __init__(self, message: str = "", *, details: dict | None = None, extra: dict | None = None):
        super().__init__(message or self.code)
        self.message = message or self.code
        self.details = details
        self.extra = extra or {}

    def body(self) -> dict:
        return error_body(self.code, self.details, **self.extra)


class NotFound(DomainError):
    status = 404
    code = "not_found"


class Conflict(DomainError):
    """A unique rule clashed; `field` names which one (docs/api.md#errors: `details.field`)."""

    status = 409
    code = "conflict"

    def __init__(self, field: str, message: str = ""):
        super().__init__(message or f"{field} already exists", details={"field": field})
        self.field = field


class Forbidden(DomainError):
    status = 403
    code = "forbidden"


class InvalidTransition(DomainError):
    status = 409
    code = "invalid_transition"


class ValidationFailed(DomainError):
    """A domain-level validation failure, rendered in the `formErrors`/`fieldErrors` shape of docs/api.md#errors."""

    status = 400
    code = "Validation failed"

    def __init__(self, *, field_errors: dict[str, list[str]] | None = None, form_errors: list[str] | None = None):
        super().__init__(
            "Validation failed",
            details={"formErrors": list(form_errors or []), "fieldErrors": dict(field_errors or {})},
        )
