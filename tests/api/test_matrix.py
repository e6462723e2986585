"""One matrix over every /v1 endpoint: no key, wrong scheme case, read key on writes, another org's key, another
org's ids, and a key limited to one location against another location's rows. Each case asserts the status, the
exact body, and that nothing changed (no row, no event). The rows come from tests/support/matrix.py."""

import re

import pytest
from django.urls import get_resolver
from rest_framework.test import APIClient

from audit.models import AuditEvent
from tests.factories import make_key
from tests.support.locations import limited_client
from tests.support.matrix import snapshot

pytestmark = pytest.mark.usefixtures("media_in_tmp")

WRITE_METHODS = ("post", "put", "patch", "delete")
BODIES = {
    "/v1/facts": {"label": "Matrix", "content": "x"},
    "/v1/facts/{fact}": {"label": "Matrix", "content": "x"},
    "/v1/team-members": {"name": "Matrix"},
    "/v1/team-members/{team_member}": {"name": "Matrix"},
    "/v1/contacts": {"phone_number": "+14155550999"},
    "/v1/contacts/{contact}": {"name": "Matrix"},
    "/v1/calls/{call}/order-status": {"status": "fulfilled"},
    "/v1/webhook-subscriptions": {"url": "https://hooks.example.com/x", "events": ["call.ended"]},
    "/v1/webhook-subscriptions/{subscription}": {"description": "Matrix"},
    "/v1/webhook-subscriptions/{subscription}/rotate-secret": {},
    "/v1/webhook-subscriptions/{subscription}/deliveries/{delivery}/retry": {},
    "/v1/webhook-subscriptions/{subscription}/recover": {"since": "2026-11-01T00:00:00Z"},
    "/v1/webhook-subscriptions/{subscription}/replay": {"since": "2026-11-01T00:00:00Z"},
    "/v1/webhook-subscriptions/{subscription}/test": {},
    "/v1/callbacks/{callback}": {"handled": True},
    "/v1/messages/{message}": {"handled": True},
    "/v1/escalations/{escalation}": {"handled": True},
    "/v1/escalation-rules": {"name": "Matrix rule", "keywords": ["x"], "destination_type": "phone",
                             "destination_phone": "+14155550100"},
    "/v1/escalation-rules/{escalation_rule}": {"enabled": False},
    "/v1/calendars": {"name": "Matrix calendar", "timezone": "UTC"},
    "/v1/calendars/{calendar}": {"slot_minutes": 15},
    "/v1/bookings/{booking}/cancel": {},
    "/v1/call-fields": {"name": "matrix_field", "label": "Matrix", "type": "string"},
    "/v1/call-fields/{call_field}": {"label": "Matrix"},
    "/v1/alert-rules": {"name": "Matrix alert", "metric": "calls", "comparator": "gt", "threshold": 5,
                        "window_minutes": 60},
    "/v1/alert-rules/{alert_rule}": {"enabled": False},
    "/v1/alerts/{alert}/acknowledge": {},
    "/v1/privacy/redaction": {"kinds": ["card_number", "email"]},
    "/v1/privacy/retention": {"recordings_days": 30},
    "/v1/privacy/erasure-requests": {"phone_number": "+14155550123"},
}
# Every /v1 route with its methods; test_the_matrix_covers_every_route keeps this honest.
ENDPOINTS = {
    "/v1/me": ("get",),
    "/v1/locations": ("get",),
    "/v1/locations/{location}": ("get",),
    "/v1/facts": ("get", "post"),
    "/v1/facts/{fact}": ("get", "put", "patch", "delete"),
    "/v1/team-members": ("get", "post"),
    "/v1/team-members/{team_member}": ("get", "patch", "delete"),
    "/v1/contacts": ("get", "post"),
    "/v1/contacts/{contact}": ("get", "patch"),
    "/v1/calls": ("get",),
    "/v1/calls/{call}": ("get",),
    "/v1/calls/{call}/recording": ("get", "delete"),
    "/v1/calls/{call}/order-status": ("patch",),
    "/v1/webhook-subscriptions": ("get", "post"),
    "/v1/webhook-subscriptions/{subscription}": ("get", "patch", "delete"),
    "/v1/webhook-subscriptions/{subscription}/rotate-secret": ("post",),
    "/v1/webhook-subscriptions/{subscription}/deliveries": ("get",),
    "/v1/webhook-subscriptions/{subscription}/stats": ("get",),
    "/v1/webhook-subscriptions/{subscription}/reconciliation": ("get",),
    "/v1/webhook-subscriptions/{subscription}/deliveries/{delivery}/retry": ("post",),
    "/v1/webhook-subscriptions/{subscription}/recover": ("post",),
    "/v1/webhook-subscriptions/{subscription}/replay": ("post",),
    "/v1/webhook-subscriptions/{subscription}/test": ("post",),
    "/v1/events": ("get",),
    "/v1/events/{event}": ("get",),
    "/v1/calls/{call}/events": ("get",),
    "/v1/event-types": ("get",),
    "/v1/callbacks": ("get",),
    "/v1/callbacks/{callback}": ("get", "patch"),
    "/v1/messages": ("get",),
    "/v1/messages/{message}": ("get", "patch"),
    "/v1/escalations": ("get",),
    "/v1/escalations/{escalation}": ("get", "patch"),
    "/v1/orders": ("get",),
    "/v1/analytics/calls": ("get",),
    "/v1/orders/{call}": ("get",),
    "/v1/escalation-rules": ("get", "post"),
    "/v1/escalation-rules/{escalation_rule}": ("get", "patch", "delete"),
    "/v1/calendars": ("get", "post"),
    "/v1/calendars/{calendar}": ("get", "patch", "delete"),
    "/v1/bookings": ("get",),
    "/v1/bookings/{booking}": ("get",),
    "/v1/bookings/{booking}/cancel": ("post",),
    "/v1/call-fields": ("get", "post"),
    "/v1/call-fields/{call_field}": ("get", "patch", "delete"),
    "/v1/audit-events": ("get",),
    "/v1/audit-events/verify": ("get",),
    "/v1/audit-events/verifications": ("post",),
    "/v1/audit-events/verifications/{audit_verification}": ("get",),
    "/v1/audit-events/head": ("get",),
    "/v1/audit-events/{audit_event}": ("get",),
    "/v1/privacy/redaction": ("get", "patch"),
    **{f"/v1/exports/{kind}.csv": ("get",) for kind in (
        "calls", "contacts", "bookings", "orders", "callbacks", "messages", "escalations")},
    "/v1/exports/{export}": ("get",),  # any other name: another format of a kind (400) or nothing (404)
    "/v1/alert-rules": ("get", "post"),
    "/v1/alert-rules/{alert_rule}": ("get", "patch", "delete"),
    "/v1/alerts": ("get",),
    "/v1/alerts/{alert}": ("get",),
    "/v1/alerts/{alert}/acknowledge": ("post",),
    "/v1/calls/{call}/content": ("delete",),
    "/v1/privacy/retention": ("get", "patch"),
    "/v1/privacy/erasure-requests": ("get", "post"),
    "/v1/privacy/erasure-requests/{erasure_request}": ("get",),
    "/v1/privacy/suppressions": ("get",),
    "/v1/privacy/suppressions/{suppression}": ("delete",),
}
# The audit trail needs the `audit` scope besides what the method needs.
AUDIT = {"/v1/audit-events", "/v1/audit-events/verify", "/v1/audit-events/{audit_event}",
         "/v1/audit-events/verifications", "/v1/audit-events/verifications/{audit_verification}",
         "/v1/audit-events/head"}
# Erasures and suppressions need the `privacy` scope besides what the method needs.
PRIVACY = {"/v1/privacy/erasure-requests", "/v1/privacy/erasure-requests/{erasure_request}",
           "/v1/privacy/suppressions", "/v1/privacy/suppressions/{suppression}"}
# The whole organization's, never a location's: a key limited to locations gets 403 (below).
ORG_WIDE = AUDIT | PRIVACY | {"/v1/privacy/retention"}
# CSV downloads of the lists: another org's key gets the header row alone.
EXPORTS = {template for template in ENDPOINTS if template.startswith("/v1/exports/") and "{" not in template}
# The same for every organization: the event catalog.
SHARED = {"/v1/event-types"}
CASES = [(template, method) for template, methods in ENDPOINTS.items() for method in methods]
OBJECT_CASES = [(template, method) for template, method in CASES if "{" in template]
WRITE_CASES = [(template, method) for template, method in CASES if method in WRITE_METHODS]


@pytest.fixture
def write_key(org, admin):
    """The matrix's keys may do everything, the audit trail and privacy included, so only what a case varies is
    refused."""
    return make_key(org, scope="read_write_audit_privacy", admin=admin, name="Write key")


@pytest.fixture
def other_key(other_org):
    return make_key(other_org, scope="read_write_audit_privacy", name="Other key")


def url_for(template: str, world: dict) -> str:
    return template.format(**{name: obj.pk for name, obj in world.items()})


# Reads whose query a valid request must carry (query parameters are checked before the id is looked for).
QUERIES = {"/v1/webhook-subscriptions/{subscription}/reconciliation": {"date": "2026-11-20"}}


def request(client: APIClient, method: str, template: str, world: dict):
    path = url_for(template, world)
    body = BODIES.get(template)
    if method == "get":
        return client.get(path, QUERIES.get(template))
    return getattr(client, method)(path, body, format="json")


def client_with(header: str | None) -> APIClient:
    client = APIClient()
    if header:
        client.credentials(HTTP_AUTHORIZATION=header)
    return client


def _without_last_used(state: dict) -> dict:
    return {k: v for k, v in state.items() if not k.endswith("last_used_at")}


@pytest.mark.parametrize(("template", "method"), CASES)
def test_no_key_is_401_and_changes_nothing(world, template, method):
    before = snapshot()
    response = request(client_with(None), method, template, world)
    assert (response.status_code, response.json()) == (401, {"error": "unauthorized"})
    assert response["WWW-Authenticate"] == "Bearer"
    assert snapshot() == before


@pytest.mark.parametrize(("template", "method"), CASES)
def test_wrong_scheme_case_is_401_and_changes_nothing(world, write_key, template, method):
    before = snapshot()
    response = request(client_with(f"bearer {write_key[1]}"), method, template, world)
    assert (response.status_code, response.json()) == (401, {"error": "unauthorized"})
    assert snapshot() == before


@pytest.mark.parametrize(("template", "method"), WRITE_CASES)
def test_read_key_on_a_write_is_403_and_changes_nothing(world, org, read_key, template, method):
    # On the audit trail a read key with `audit` (without it, `audit` is what is missing: the test below).
    plaintext = make_key(org, scope="read_audit")[1] if template in AUDIT else read_key[1]
    client = client_with(f"Bearer {plaintext}")
    client.get("/v1/me")  # settle last_used_at first
    before = snapshot()
    response = request(client, method, template, world)
    assert (response.status_code, response.json()) == (403, {"error": "insufficient_scope", "required": "write"})
    assert snapshot() == before


@pytest.mark.parametrize(("template", "method"), [(t, m) for t, m in CASES if t in AUDIT])
@pytest.mark.parametrize("scope", ["read", "read_write"])
def test_a_key_without_the_audit_scope_is_403_and_changes_nothing(world, org, scope, template, method):
    client = client_with(f"Bearer {make_key(org, scope=scope)[1]}")
    client.get("/v1/me")
    before = snapshot()
    response = request(client, method, template, world)
    assert (response.status_code, response.json()) == (403, {"error": "insufficient_scope", "required": "audit"})
    assert snapshot() == before


@pytest.mark.parametrize(("template", "method"), [(t, m) for t, m in CASES if t in PRIVACY])
@pytest.mark.parametrize("scope", ["read", "read_write", "read_write_audit"])
def test_a_key_without_the_privacy_scope_is_403_and_changes_nothing(world, org, scope, template, method):
    client = client_with(f"Bearer {make_key(org, scope=scope)[1]}")
    client.get("/v1/me")
    before = snapshot()
    response = request(client, method, template, world)
    required = "write" if scope == "read" and method != "get" else "privacy"  # the method's scope is checked first
    assert (response.status_code, response.json()) == (403, {"error": "insufficient_scope", "required": required})
    assert snapshot() == before


@pytest.mark.parametrize(("template", "method"), OBJECT_CASES)
def test_another_orgs_key_gets_404_for_these_ids_and_changes_nothing(world, other_key, template, method):
    client = client_with(f"Bearer {other_key[1]}")
    client.get("/v1/me")
    before = snapshot()
    response = request(client, method, template, world)
    assert (response.status_code, response.json()) == (404, {"error": "not_found"})
    assert snapshot() == before


@pytest.mark.parametrize(("template", "method"), OBJECT_CASES)
def test_a_missing_id_answers_the_same_bytes_as_another_orgs(world, write_key, other_key, template, method):
    missing = {name: type("Missing", (), {"pk": "00000000-0000-4000-8000-000000000000"})() for name in world}
    own = client_with(f"Bearer {write_key[1]}")
    other = client_with(f"Bearer {other_key[1]}")
    assert request(own, method, template, missing).content == request(other, method, template, world).content


@pytest.mark.parametrize("template", [t for t, m in CASES if "{" not in t and m == "get"])
def test_another_orgs_key_lists_only_its_own_org(world, other_key, write_key, template):
    response = request(client_with(f"Bearer {other_key[1]}"), "get", template, world)
    assert response.status_code == 200
    if template in EXPORTS:
        assert b"".join(response.streaming_content).decode().count("\r\n") == 1
        return
    data = response.json()["data"]
    if template in SHARED:
        assert data == request(client_with(f"Bearer {write_key[1]}"), "get", template, world).json()["data"]
    elif template in AUDIT:  # the other org has entries of its own (its key's creation), and only those
        own = {str(pk) for pk in AuditEvent.objects.for_org(other_key[0].organization).values_list("pk", flat=True)}
        if isinstance(data, list):
            assert data and {entry["id"] for entry in data} == own
        elif template == "/v1/audit-events/head":
            assert (data["organization_id"], data["seq"]) == (str(other_key[0].organization_id), len(own))
        else:
            assert data == {"intact": True, "entries_checked": len(own), "first_broken_id": None, "complete": True,
                            "entries_hashed": len(own), "verified_through_seq": len(own), "head_seq": len(own)}
    elif isinstance(data, list):
        assert data == []
    elif template == "/v1/privacy/retention":  # a new organization's defaults
        assert data == {"recordings_days": 90, "transcripts_days": 365, "locations": []}
    elif template == "/v1/analytics/calls":  # the world's calls are the first org's
        assert data["totals"]["calls"] == 0
    elif template == "/v1/privacy/redaction":  # the other org's own policy (the defaults)
        assert data["kinds"] == ["card_number", "government_id", "bank_account"]
    else:
        assert data["org_name"] == "Other Org"


def test_the_matrix_covers_every_route():
    def walk(patterns, prefix=""):
        for pattern in patterns:
            if hasattr(pattern, "url_patterns"):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            else:
                view = getattr(pattern.callback, "cls", None)
                yield prefix + str(pattern.pattern), tuple(
                    m for m in ("get", *WRITE_METHODS) if hasattr(view, m) and m in view.http_method_names)

    routes = {
        "/" + re.sub(r"<(?:\w+:)?(\w+)>", "{}", path): methods
        for path, methods in walk(get_resolver().url_patterns)
        if path.startswith("v1/") and "__test__" not in path
    }
    matrix = {re.sub(r"\{\w+\}", "{}", template): methods for template, methods in ENDPOINTS.items()}
    assert matrix == routes


# The matrix again, inside one organization: a key limited to location L1 against the rows of location L2
# (docs/api.md#locations-and-scope). Every route answers exactly as for another organization's ids (404, nothing
# changed), and every list, filter, count and search leaves the L2 rows out; what belongs to the whole
# organization (ORG_WIDE) is a 403 naming the scope.


def _scoped_here(template: str) -> bool:
    return template not in ORG_WIDE


@pytest.fixture
def scoped_api(org, admin, l1):
    return limited_client(org, [l1.id], admin=admin, scope="read_write_audit_privacy", name="L1 key")


def _ids(world: dict) -> set[str]:
    return {str(obj.pk) for name, obj in world.items() if name not in ("audit_event", "audit_verification", "export")}


PRIVACY_WHAT = {"/v1/privacy/retention": "the retention policy",
                "/v1/privacy/erasure-requests": "erasure requests",
                "/v1/privacy/erasure-requests/{erasure_request}": "erasure requests",
                "/v1/privacy/suppressions": "suppressions", "/v1/privacy/suppressions/{suppression}": "suppressions"}


@pytest.mark.parametrize(("template", "method"), [(t, m) for t, m in CASES if t in PRIVACY_WHAT])
def test_a_key_of_l1_gets_403_on_the_organizations_privacy(l2_world, scoped_api, l1, template, method):
    before = snapshot()
    response = request(scoped_api, method, template, l2_world)
    verb = "read" if method == "get" else "changed"
    message = f"Limited to locations {l1.id}: {PRIVACY_WHAT[template]} cannot be {verb} within this scope."
    assert (response.status_code, response.json()) == (
        403, {"error": "forbidden", "details": {"message": message, "location_ids": [str(l1.id)]}})
    assert snapshot() == before


@pytest.mark.parametrize(("template", "method"), [(t, m) for t, m in OBJECT_CASES if _scoped_here(t)])
def test_a_key_of_l1_gets_404_for_l2_ids_and_changes_nothing(l2_world, scoped_api, template, method):
    before = snapshot()
    response = request(scoped_api, method, template, l2_world)
    assert (response.status_code, response.json()) == (404, {"error": "not_found"})
    assert snapshot() == before


@pytest.mark.parametrize("template", [t for t, m in CASES if "{" not in t and m == "get" and _scoped_here(t)])
def test_a_key_of_l1_lists_nothing_of_l2(l2_world, scoped_api, template):
    response = request(scoped_api, "get", template, l2_world)
    assert response.status_code == 200
    if template in EXPORTS:  # the header row alone
        body = b"".join(response.streaming_content).decode()
        assert body.count("\r\n") == 1 and [pk for pk in _ids(l2_world) if pk in body] == []
        return
    data = response.json()["data"]
    if template == "/v1/analytics/calls":  # every call of the world is at L2
        assert data["totals"]["calls"] == 0
        return
    if template in SHARED:
        return
    if template == "/v1/me":
        assert data["location_ids"] != []
        return
    if template == "/v1/privacy/redaction":  # the organization's policy, the same seen from any location
        assert data["kinds"] == ["card_number", "government_id", "bank_account"]
        return
    assert isinstance(data, list)
    body = response.content.decode()
    assert [pk for pk in _ids(l2_world) if pk in body] == [], data


@pytest.mark.parametrize(("template", "method"), [(t, m) for t, m in CASES if t in AUDIT])
def test_a_key_of_l1_cannot_read_the_audit_trail(l2_world, scoped_api, l1, template, method):
    response = request(scoped_api, method, template, l2_world)
    message = f"Limited to locations {l1.id}: the audit trail cannot be read within this scope."
    assert (response.status_code, response.json()) == (
        403, {"error": "forbidden", "details": {"message": message, "location_ids": [str(l1.id)]}})
