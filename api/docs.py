"""OpenAPI helpers: the response envelopes and every error response, with examples, for drf-spectacular."""

import functools
import inspect

from drf_spectacular.utils import OpenApiExample, OpenApiResponse, inline_serializer
from rest_framework import serializers

from .serializers import StrictInputSerializer

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


_IDEMPOTENCY_ERRORS = {
    "400": ("Validation failed, or a malformed Idempotency-Key", {"error": "Validation failed", "details": {
        "formErrors": [], "fieldErrors": {"Idempotency-Key": ["Must be 1 to 255 printable ASCII characters."]}}}),
    "409": ("Idempotency-Key in use by a request still running (or a unique rule clashed)",
            {"error": "idempotency_key_in_use"}),
    "422": ("Idempotency-Key already used with another request", {"error": "idempotency_key_reused"}),
}
_ANY_OPERATION_ERRORS = {
    "414": ("Path and query string over 4,096 characters (settings.MAX_URL_LENGTH)", {"error": "uri_too_long"}),
}


def _error_response(template: dict, status: str) -> dict:
    summary, example = {**_IDEMPOTENCY_ERRORS, **_ANY_OPERATION_ERRORS}[status]
    content = {media: {**body, "examples": {status: {"value": example, "summary": summary}}}
               for media, body in template["content"].items()}
    return {"description": summary, "content": content}


_NO_NUL = "^[^\\x00]*$"
_NOT_BLANK = "^[^\\x00]*[^\\s\\x00][^\\x00]*$"
_STRICT_DOC = inspect.cleandoc(StrictInputSerializer.__doc__)


def _closed(schema: dict, components: dict, seen: set) -> None:
    """`additionalProperties: false` on an object schema and every object schema it refers to or nests."""
    ref = schema.get("$ref")
    if ref:
        name = ref.rsplit("/", 1)[-1]
        if name not in seen:
            seen.add(name)
            _closed(components[name], components, seen)
        return
    types = schema.get("type")
    if "string" in (types if isinstance(types, list) else [types]) and not {"enum", "format", "pattern"} & set(schema):
        # DRF refuses NUL characters, and trims whitespace before its blank check.
        schema["pattern"] = _NOT_BLANK if schema.get("minLength", 0) >= 1 else _NO_NUL
    if schema.get("type") == "object" and "properties" in schema:
        schema["additionalProperties"] = False
        if schema.get("description") == _STRICT_DOC:  # inherited by every input serializer; it speaks to us
            del schema["description"]
    for key in ("properties",):
        for sub in schema.get(key, {}).values():
            _closed(sub, components, seen)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            _closed(schema[key], components, seen)
    for key in ("allOf", "oneOf", "anyOf"):
        for sub in schema.get(key, []):
            _closed(sub, components, seen)


def add_request_rules(result, generator, request, public):
    """drf-spectacular postprocessing hook: what every /v1 write enforces beyond its serializer's fields.

    Every POST and PATCH takes `Idempotency-Key` and may answer its 400, 409 and 422; every operation may answer
    414 (voiceagent.middleware); every request body is closed (`additionalProperties: false`), as
    StrictInputSerializer refuses unknown keys, and its strings say what DRF refuses (NUL, blank)."""
    components = result.get("components", {}).get("schemas", {})
    closed: set = set()
    for path, item in result.get("paths", {}).items():
        if not path.startswith("/v1/"):
            continue
        for method, operation in item.items():
            if not isinstance(operation, dict):
                continue
            for body in operation.get("requestBody", {}).get("content", {}).values():
                _closed(body["schema"], components, closed)
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "query":
                    _closed(parameter["schema"], components, closed)
            responses = operation["responses"]
            for status in _ANY_OPERATION_ERRORS:
                responses.setdefault(status, _error_response(responses["401"], status))
            if method not in ("post", "patch"):
                continue
            operation.setdefault("parameters", []).append(IDEMPOTENCY_HEADER)
            for status in _IDEMPOTENCY_ERRORS:
                if status not in responses:
                    responses[status] = _error_response(responses["401"], status)
    _link_creates(result["paths"])
    return result


def _link_creates(paths: dict) -> None:
    """Links from each create (`POST /v1/<things>` answering 201) to every operation under `/v1/<things>/{id}`,
    with the new `data.id` as `id`: a client (or a fuzzer) follows them without guessing."""
    for path, item in paths.items():
        created = item.get("post", {}).get("responses", {}).get("201")
        if not path.startswith("/v1/") or created is None:
            continue
        links = {}
        for other, other_item in paths.items():
            if not other.startswith(path + "/{id}"):
                continue
            for method, operation in other_item.items():
                if isinstance(operation, dict) and "operationId" in operation and other.count("{") == 1:
                    links[operation["operationId"]] = {
                        "operationId": operation["operationId"],
                        "parameters": {"id": "$response.body#/data/id"},
                        "description": f"{method.upper()} {other} for the created resource.",
                    }
        if links:
            created["links"] = links
