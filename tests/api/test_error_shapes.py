"""Every status on /v1 answers the JSON error body of docs/api.md#errors, never HTML or a trace."""

import json
import logging

import pytest
from django.test import Client

from contacts import services as contact_services
from webhooks.errors import UnknownEventType


def test_400_body_not_json(api):
    response = api.generic("POST", "/v1/contacts", "{not json", content_type="application/json")
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "Validation failed"
    assert body["details"]["fieldErrors"] == {}
    assert len(body["details"]["formErrors"]) == 1


@pytest.mark.parametrize("payload", ["[]", "[1, 2]", "\"a string\"", "42", "null"])
def test_400_body_not_an_object(api, payload):
    response = api.generic("POST", "/v1/contacts", payload, content_type="application/json")
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "Validation failed"
    assert body["details"]["fieldErrors"] == {}
    assert body["details"]["formErrors"]


def test_400_wrong_content_type(api):
    response = api.generic("POST", "/v1/contacts", "phone_number=4155550100", content_type="text/plain")
    assert response.status_code == 400
    assert response.json() == {
        "error": "Validation failed",
        "details": {"formErrors": ["Content-Type must be application/json"], "fieldErrors": {}},
    }


def test_400_unknown_fields_are_rejected(api):
    response = api.post("/v1/contacts", {"phone_number": "+14155550100", "x": 1}, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "error": "Validation failed",
        "details": {"formErrors": ["Unrecognized key(s) in object: 'x'"], "fieldErrors": {}},
    }


def test_400_phone_number_too_short(api):
    response = api.post("/v1/contacts", {"phone_number": "12345"}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "Validation failed"
    assert body["details"]["formErrors"] == []
    assert list(body["details"]["fieldErrors"]) == ["phone_number"]
    assert "10 characters" in body["details"]["fieldErrors"]["phone_number"][0]


@pytest.mark.parametrize("limit", ["0", "101", "-1", "abc", "99999999999999999999", "1.5"])
def test_400_limit_out_of_range(api, limit):
    response = api.get(f"/v1/contacts?limit={limit}")
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "Validation failed"
    assert body["details"]["formErrors"] == []
    assert list(body["details"]["fieldErrors"]) == ["limit"]


def test_400_forged_cursor(api):
    response = api.get("/v1/contacts?cursor=eyJ0IjoiMjAyNi0wMS0wMVQwMDowMDowMCJ9")
    assert response.status_code == 400
    assert response.json() == {
        "error": "Validation failed",
        "details": {"formErrors": [], "fieldErrors": {"cursor": ["Invalid cursor."]}},
    }


def test_401(db):
    response = Client().get("/v1/me")
    assert response.status_code == 401
    assert response.json() == {"error": "unauthorized"}
    assert response["WWW-Authenticate"] == "Bearer"


def test_403(read_api):
    response = read_api.post("/v1/contacts", {"phone_number": "+14155550100"}, format="json")
    assert response.status_code == 403
    assert response.json() == {"error": "insufficient_scope", "required": "write"}


@pytest.mark.parametrize("path", ["/v1/nope", "/v1/", "/v1", "/v1/contacts/not-a-uuid", "/v1/me/extra"])
def test_404_from_the_router(api, path):
    response = api.get(path)
    assert response.status_code == 404
    assert response.json() == {"error": "not_found"}
    assert response["Content-Type"] == "application/json"


def test_405(api):
    response = api.delete("/v1/me")
    assert response.status_code == 405
    assert response.json() == {"error": "method_not_allowed"}
    assert "GET" in response["Allow"]


def test_409(api):
    assert api.post("/v1/contacts", {"phone_number": "+1 (415) 555-0100"}, format="json").status_code == 201
    response = api.post("/v1/contacts", {"phone_number": "+14155550100"}, format="json")
    assert response.status_code == 409
    assert response.json() == {"error": "conflict", "details": {"field": "phone_number"}}


def test_413_from_content_length_before_parsing(api):
    from contacts.models import Contact

    body = json.dumps({"phone_number": "+14155550100", "notes": "x" * 4_718_592})
    response = api.generic("POST", "/v1/contacts", body, content_type="application/json")
    assert response.status_code == 413
    assert response.json() == {"error": "payload_too_large"}
    assert Contact.objects.count() == 0


def test_413_applies_before_authentication(db):
    response = Client().generic("POST", "/v1/contacts", "x" * 4_718_593, content_type="application/json")
    assert response.status_code == 413
    assert response.json() == {"error": "payload_too_large"}


def test_exactly_the_limit_is_not_413(api):
    body = json.dumps({"phone_number": "+14155550100", "notes": ""})
    body = body[:-1] + " " * (4_718_592 - len(body)) + "}"
    assert len(body.encode()) == 4_718_592
    response = api.generic("POST", "/v1/contacts", body, content_type="application/json")
    assert response.status_code != 413


def test_500_is_json_without_a_trace(api):
    client = api
    client.raise_request_exception = False
    response = client.get("/v1/__test__/boom")
    assert response.status_code == 500
    assert response.json() == {"error": "internal_error"}
    assert b"boom" not in response.content and b"Traceback" not in response.content


def test_a_domain_error_of_500_is_answered_and_logged_by_the_one_handler(api, caplog, monkeypatch):
    # UnknownEventType is a programming error with status 500: the client sees the plain 500, the log sees the trace.
    def broken(**kwargs):
        raise UnknownEventType("Unknown event type 'contact.exploded'")

    monkeypatch.setattr(contact_services, "contact_create", broken)
    with caplog.at_level(logging.ERROR, logger="api"):
        response = api.post("/v1/contacts", {"phone_number": "+14155550100"}, format="json")
    assert response.status_code == 500
    assert response.json() == {"error": "internal_error"}
    logged = [r for r in caplog.records if r.name == "api" and r.levelno >= logging.ERROR]
    assert [r.exc_info[0] for r in logged] == [UnknownEventType]


def test_a_domain_error_below_500_is_not_logged_as_an_error(api, caplog):
    with caplog.at_level(logging.ERROR, logger="api"):
        assert api.get("/v1/contacts/00000000-0000-0000-0000-000000000000").status_code == 404
    assert not [r for r in caplog.records if r.name == "api"]


@pytest.mark.parametrize("method", ["get", "options", "post"])
def test_no_cors_headers_on_any_response(api, anon_api, method):
    for client in (api, anon_api):
        response = getattr(client, method)(
            "/v1/me", HTTP_ORIGIN="https://evil.example", HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET"
        )
        assert not [h for h in response.headers if h.lower().startswith("access-control-allow-")]


def test_request_id_on_every_response(api, anon_api):
    ids = {api.get("/v1/me")["X-Request-Id"], anon_api.get("/v1/me")["X-Request-Id"], api.get("/v1/x")["X-Request-Id"]}
    assert len(ids) == 3 and all(ids)


def test_a_plain_incoming_request_id_is_kept_and_an_unsafe_one_replaced(api):
    assert api.get("/v1/me", HTTP_X_REQUEST_ID="client-req-12345")["X-Request-Id"] == "client-req-12345"
    replaced = api.get("/v1/me", HTTP_X_REQUEST_ID="bad\nid injected")["X-Request-Id"]
    assert replaced.startswith("req_")


def test_request_id_is_in_log_lines(api, caplog):
    api.raise_request_exception = False
    response = api.get("/v1/__test__/boom")
    assert any(getattr(r, "request_id", None) == response["X-Request-Id"] for r in caplog.records)


def test_djangos_own_request_log_lines_carry_the_request_id(api, caplog):
    response = api.get("/v1/no-such-endpoint")
    records = [r for r in caplog.records if r.name == "django.request"]
    assert records and all(getattr(r, "request_id", None) == response["X-Request-Id"] for r in records)
