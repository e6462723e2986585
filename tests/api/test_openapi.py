"""The API reference: a valid OpenAPI 3 schema at /api/openapi.json and a rendered page at /api/docs."""

import json

import pytest
from django.conf import settings
from django.test import Client
from drf_spectacular.validation import validate_schema

from webhooks.models import EVENT_TYPES


@pytest.fixture
def schema(db):
    response = Client().get("/api/openapi.json")
    assert response.status_code == 200
    return json.loads(response.content)


def test_schema_is_valid_openapi_3(schema):
    assert schema["openapi"].startswith("3.")
    validate_schema(schema)  # raises on an invalid document


def test_the_schema_description_carries_the_api_decisions_of_docs_api_md(schema):
    decisions = (settings.BASE_DIR / "docs" / "api.md").read_text()
    for heading in ("## Authentication", "## Errors", "## Limits", "### Orders", "## Webhook delivery"):
        assert heading in decisions
        assert heading in schema["info"]["description"]


def test_schema_declares_the_bearer_key_scheme(schema):
    assert schema["components"]["securitySchemes"]["bearerKey"] == {
        "type": "http",
        "scheme": "bearer",
        "description": schema["components"]["securitySchemes"]["bearerKey"]["description"],
    }
    for path, item in schema["paths"].items():
        for method, op in item.items():
            assert op["security"] == [{"bearerKey": []}], f"{method.upper()} {path} is not behind the key"


def test_every_v1_operation_documents_its_errors_with_examples(schema):
    operations = [
        (path, method, op)
        for path, item in schema["paths"].items()
        if path.startswith("/v1/")
        for method, op in item.items()
    ]
    assert any(path == "/v1/me" for path, _, _ in operations)
    for path, method, op in operations:
        for status in ("401", "429", "500"):
            assert status in op["responses"], f"{method.upper()} {path} lacks {status}"
            assert op["responses"][status]["content"]["application/json"]["examples"], (path, method, status)
        if method != "get":
            assert "403" in op["responses"] or path.startswith("/v1/me"), f"{method.upper()} {path} lacks 403"


def test_only_v1_paths_are_documented(schema):
    assert all(path.startswith("/v1/") for path in schema["paths"])


def test_docs_page_renders_without_a_key(db):
    response = Client().get("/api/docs")
    assert response.status_code == 200
    assert b"openapi.json" in response.content


def test_schema_generates_without_a_single_warning(db, tmp_path):
    from django.core.management import call_command

    # --fail-on-warn turns every drf-spectacular warning (name clashes, unresolvable fields) into an error.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    assert (tmp_path / "schema.yaml").read_text().startswith("openapi: 3.")


def test_the_nine_events_are_openapi_webhooks_with_the_catalogs_schemas(schema, read_api):
    assert schema["openapi"] == "3.1.0"
    served = {item["type"]: item["schema"] for item in read_api.get("/v1/event-types").json()["data"]}
    assert list(schema["webhooks"]) == list(EVENT_TYPES)
    for event_type, item in schema["webhooks"].items():
        operation = item["post"]
        assert operation["requestBody"]["content"]["application/json"]["schema"] == served[event_type]
        assert {p["name"] for p in operation["parameters"]} == {"webhook-id", "webhook-timestamp", "webhook-signature"}


def _v1_operations(schema):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if path.startswith("/v1/") and isinstance(operation, dict):
                yield path, method, operation


def _resolve(schema, node):
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def test_every_request_body_is_closed_as_the_server_refuses_unknown_keys(schema, api):
    bodies = 0
    for path, method, operation in _v1_operations(schema):
        for content in operation.get("requestBody", {}).get("content", {}).values():
            body = _resolve(schema, content["schema"])
            assert body["additionalProperties"] is False, f"{method} {path}"
            bodies += 1
    assert bodies >= 15
    response = api.post("/v1/facts", {"label": "x", "content": "y", "extra": 1}, format="json")
    assert response.json()["details"]["formErrors"] == ["Unrecognized key(s) in object: 'extra'"]


def test_every_post_and_patch_documents_the_idempotency_answers(schema):
    for path, method, operation in _v1_operations(schema):
        if method in ("post", "patch"):
            assert {"400", "409", "422"} <= set(operation["responses"]), f"{method} {path}"
            assert operation["responses"]["422"]["content"]["application/json"]["examples"]["422"]["value"] == {
                "error": "idempotency_key_reused"}


@pytest.mark.parametrize(("path", "field"), [("/v1/callbacks/{id}", "handled"),
                                            ("/v1/calls/{id}/order-status", "status")])
def test_a_patch_that_needs_its_whole_body_says_so(schema, api, path, field):
    body = _resolve(schema, schema["paths"][path]["patch"]["requestBody"]["content"]["application/json"]["schema"])
    assert body["required"] == [field]
    another = [p for p, _, o in _v1_operations(schema) if p == "/v1/contacts/{id}" and "requestBody" in o]
    contact_patch = schema["paths"]["/v1/contacts/{id}"]["patch"]["requestBody"]["content"]["application/json"]
    assert "required" not in _resolve(schema, contact_patch["schema"]) and another  # partial PATCH stays partial


def test_each_create_links_to_the_operations_that_use_its_id(schema):
    links = schema["paths"]["/v1/contacts"]["post"]["responses"]["201"]["links"]
    assert links["contacts_retrieve"] == {
        "operationId": "contacts_retrieve", "parameters": {"id": "$response.body#/data/id"},
        "description": "GET /v1/contacts/{id} for the created resource.",
    }
    for path in ("/v1/facts", "/v1/team-members", "/v1/webhook-subscriptions"):
        targets = {link["operationId"] for link in schema["paths"][path]["post"]["responses"]["201"]["links"].values()}
        expected = {  # the operations whose only id the create supplies
            operation["operationId"] for other, item in schema["paths"].items()
            if other.startswith(path + "/{id}") and other.count("{") == 1
            for operation in item.values() if isinstance(operation, dict)
        }
        assert targets == expected and targets, path


def test_every_v1_operation_documents_the_json_414(schema):
    for path, method, operation in _v1_operations(schema):
        assert "414" in operation["responses"], f"{method} {path}"
