"""OpenAPI helpers: the response envelopes and every error response, with examples, for drf-spectacular."""

import functools

from drf_spectacular.utils import OpenApiExample, OpenApiResponse, inline_serializer
from rest_framework import serializers

_ERROR_EXAMPLES = {
    400: ("Validation failed", {"error": "Validation failed", "details": {"formErrors": [], "fieldErrors": {
        "phone_number": ["Ensure this field has at least 10 characters."]}}}),
    401: ("Missing, malformed, unknown or revoked key", {"error": "unauthorized"}),
    403: ("Read-only key on a write endpoint", {"error": "insufficient_scope", "required": "write"}),
    404: ("Not found, or another organization's", {"error": "not_found"}),
    405: ("Method not allowed", {"error": "method_not_allowed"}),
    409: ("Unique rule clashed", {"error": "conflict", "details": {"field": "phone_number"}}),
    413: ("Body over 4.5 MB", {"error": "payload_too_large"}),
    429: ("Rate limited; wait Retry-After seconds", {"error": "rate_limited"}),
    500: ("Internal error; retry with backoff", {"error": "internal_error"}),
}

ErrorSerializer = inline_serializer(
    name="Error",
    fields={
        "error": serializers.CharField(help_text="A stable semantic code, e.g. `unauthorized`, `not_found`."),
        "details": serializers.DictField(required=False, help_text="Present on validation failures and 409s."),
        "required": serializers.CharField(required=False, help_text="The missing scope, with `insufficient_scope`."),
    },
)


def error_responses(*statuses: int) -> dict:
    """Error responses for the given statuses, plus 413 and 500 which any endpoint may answer."""
    responses = {}
    for status in sorted({*statuses, 401, 413, 429, 500}):
        summary, example = _ERROR_EXAMPLES[status]
        responses[status] = OpenApiResponse(
            response=ErrorSerializer,
            description=summary,
            examples=[OpenApiExample(f"{status}", value=example, response_only=True, status_codes=[str(status)])],
        )
    return responses


@functools.cache
def envelope(serializer_class, name: str | None = None):
    """`{"data": <serializer_class>}`. Cached: two views naming the same envelope get one component."""
    return inline_serializer(
        name=name or f"{serializer_class.__name__.removesuffix('Serializer')}Response",
        fields={"data": serializer_class()},
    )


@functools.cache
def list_envelope(serializer_class, name: str | None = None):
    """`{"data": [...], "has_more": bool, "next_cursor": string|null}`."""
    return inline_serializer(
        name=name or f"{serializer_class.__name__.removesuffix('Serializer')}List",
        fields={
            "data": serializer_class(many=True),
            "has_more": serializers.BooleanField(),
            "next_cursor": serializers.CharField(allow_null=True),
        },
    )


IDEMPOTENCY_HEADER = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "1 to 255 printable ASCII characters, unique per request you mean. A retry with the same key and "
    "the same request gets the first answer again (with `Idempotent-Replayed: true`) and changes nothing; the same "
    "key with another request is 422 `idempotency_key_reused`; while the first still runs, 409 "
    "`idempotency_key_in_use`. Kept 24 hours per API key. Errors are not kept: a retry runs again.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x20-\\x7E]+$"},
}


def add_idempotency_header(result, generator, request, public):
    """drf-spectacular postprocessing hook: every POST and PATCH under /v1 takes `Idempotency-Key`."""
    for path, item in result.get("paths", {}).items():
        if not path.startswith("/v1/"):
            continue
        for method in ("post", "patch"):
            if method in item:
                item[method].setdefault("parameters", []).append(IDEMPOTENCY_HEADER)
    return result
