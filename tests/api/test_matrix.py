"""One matrix over every /v1 endpoint: no key, wrong scheme case, read key on writes, another org's key, another
org's ids. Each case asserts the status, the exact body, and that nothing changed (no row, no event)."""

from types import SimpleNamespace

import pytest
from django.apps import apps
from django.urls import get_resolver
from django.utils import timezone
from rest_framework.test import APIClient

from alerts.models import Alert
from alerts.services import alert_rule_create
from audit.models import AuditEvent, AuditVerification
from calls.models import Booking, CallbackRequest, Escalation, Message
from knowledge.services import (
    calendar_create,
    call_field_create,
    escalation_rule_create,
    fact_create,
    location_create,
    team_member_create,
)
from privacy.models import Suppression
from privacy.services import erasure_request_create
from tests.calls.conftest import Runtime
from tests.factories import make_key
from webhooks.services import emit, subscription_create

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
# The whole organization's, never a location's: a key limited to locations gets 403 (test_location_matrix).
ORG_WIDE = AUDIT | PRIVACY | {"/v1/privacy/retention"}
# CSV downloads of the lists: another org's key gets the header row alone.
EXPORTS = {template for template in ENDPOINTS if template.startswith("/v1/exports/") and "{" not in template}
# The same for every organization: the event catalog.
SHARED = {"/v1/event-types"}
CASES = [(template, method) for template, methods in ENDPOINTS.items() for method in methods]
OBJECT_CASES = [(template, method) for template, method in CASES if "{" in template]
WRITE_CASES = [(template, method) for template, method in CASES if method in WRITE_METHODS]


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": tmp_path}},
    }


@pytest.fixture
def write_key(org, admin):
    """The matrix's keys may do everything, the audit trail and privacy included, so only what a case varies is
    refused."""
    return make_key(org, scope="read_write_audit_privacy", admin=admin, name="Write key")


@pytest.fixture
def other_key(other_org):
    return make_key(other_org, scope="read_write_audit_privacy", name="Other key")


@pytest.fixture
def world(org, admin, settings):
    """One of each object the API addresses, all in `org`."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    location = location_create(
        org=org, name="Main", address="1 Main St", timezone="America/New_York", phone_number="+12125550100"
    )
    runtime = Runtime(org)
    call_id, _ = runtime.start()
    member = team_member_create(org=org, name="Escalation target")
    rule = escalation_rule_create(org=org, name="Matrix", destination_type="team_member",
                                  destination_team_member=member, keywords=["manager"])
    assert runtime.event(call_id, type="callback_requested", label="cb", data={
        "requested_window": "asap", "reason": "Matrix"}).status_code == 201
    assert runtime.event(call_id, type="escalation_triggered", label="esc", data={
        "rule_id": str(rule.id), "triggered_by": "keyword", "context": "x"}).status_code == 201
    calendar = calendar_create(org=org, name="Matrix", timezone_name="UTC",
                               weekly_hours=[{"day": "mon", "start": "00:00", "end": "24:00"}])
    assert runtime.event(call_id, type="appointment_booked", label="book", data={
        "calendar_id": str(calendar.id), "start_at": "2030-01-07T10:00:00Z",
        "end_at": "2030-01-07T10:30:00Z"}).status_code == 201
    assert runtime.complete(call_id, messages=[{"message": "Matrix message"}]).status_code in (200, 201)
    assert runtime.upload(call_id).status_code in (200, 201)
    call = runtime.call(call_id)
    subscription, _ = subscription_create(org=org, url="https://hooks.example.com/in", events=["call.ended"])
    emit(org=org, type="call.ended", data={"call_id": str(call.id)})
    alert_rule = alert_rule_create(org=org, name="Matrix watch", metric="calls", comparator="gt", threshold=0,
                                   window_minutes=60, location_ids=[location.pk], channels=[])
    erasure = erasure_request_create(org=org, phone_number="+14155550999", suppress=True)  # its worker never runs
    return {
        "alert_rule": alert_rule,
        "alert": Alert.objects.create(organization=org, rule=alert_rule, location=location, metric="calls", value=3,
                                      threshold=0, window_minutes=60, triggered_at=call.started_at),
        "location": location,
        "fact": fact_create(org=org, label="Hours", content="9-5"),
        "team_member": team_member_create(org=org, name="Sam"),
        "contact": call.contact,
        "call": call,
        "subscription": subscription,
        "delivery": subscription.deliveries.get(),
        "event": subscription.deliveries.get().event,
        "callback": CallbackRequest.objects.get(call=call),
        "message": Message.objects.get(call=call),
        "escalation": Escalation.objects.get(call=call),
        "escalation_rule": rule,
        "calendar": calendar,
        "booking": Booking.objects.get(calendar=calendar),
        "call_field": call_field_create(org=org, name="party_size", label="Party size", type="number"),
        "audit_event": AuditEvent.objects.for_org(org).order_by("occurred_at").first(),
        "audit_verification": AuditVerification.objects.create(
            organization_id=org.pk, status="succeeded", created_at=timezone.now(), updated_at=timezone.now()),
        "export": SimpleNamespace(pk="payments.csv"),  # no such kind
        "erasure_request": erasure,
        "suppression": Suppression.objects.get(erasure_request=erasure),
    }


def url_for(template: str, world: dict) -> str:
    return template.format(**{name: obj.pk for name, obj in world.items()})


def snapshot() -> dict:
    """Row counts and the newest change of every project model: any write shows up here."""
    state = {}
    for model in apps.get_models():
        if model._meta.app_label not in {"orgs", "knowledge", "contacts", "calls", "webhooks", "meetings",
                                         "notifications", "audit", "privacy", "alerts"}:
            continue
        manager = model._default_manager
        state[model._meta.label] = manager.count()
        field = next((f for f in ("updated_at", "last_used_at") if hasattr(model, f)), None)
        if field:
            state[f"{model._meta.label}.{field}"] = manager.order_by(f"-{field}").values_list(field, flat=True).first()
    return state


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
    import re

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
