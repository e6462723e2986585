"""The isolation matrix again, inside one organization: a key limited to location L1 against the rows of location
L2 (docs/api.md#locations-and-scope). Every route answers exactly as for another organization's ids (404, nothing
changed), and every list, filter, count and search leaves the L2 rows out."""

import pytest
from rest_framework.test import APIClient

from alerts.models import Alert
from alerts.services import alert_rule_create
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
from tests.api.test_matrix import AUDIT, CASES, EXPORTS, OBJECT_CASES, ORG_WIDE, SHARED, request, snapshot
from tests.calls.conftest import Runtime
from tests.factories import make_key
from webhooks.services import emit, subscription_create


def _scoped_here(template: str) -> bool:
    return template not in ORG_WIDE


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": tmp_path}},
    }


def _location(org, name, phone):
    return location_create(org=org, name=name, address="1 Main St", timezone="America/New_York", phone_number=phone)


@pytest.fixture
def l1(org):
    return _location(org, "L1", "+12125550101")


@pytest.fixture
def l2(org):
    return _location(org, "L2", "+12125550102")


@pytest.fixture
def scoped_key(org, admin, l1):
    return make_key(org, scope="read_write_audit_privacy", admin=admin, name="L1 key", location_ids=[l1.id])


@pytest.fixture
def scoped_api(scoped_key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {scoped_key[1]}")
    client.get("/v1/me")  # settle last_used_at first
    return client


@pytest.fixture
def world(org, l1, l2, settings):
    """One of each object the API addresses, all at L2 (or attached to it only)."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    runtime = Runtime(org)
    call_id, _ = runtime.start(location_id=l2.id, from_number="+14155550177")
    member = team_member_create(org=org, name="L2 manager")
    rule = escalation_rule_create(org=org, name="L2 rule", destination_type="team_member",
                                  destination_team_member=member, keywords=["manager"], location=l2)
    assert runtime.event(call_id, type="callback_requested", label="cb", data={
        "requested_window": "asap", "reason": "Matrix"}).status_code == 201
    assert runtime.event(call_id, type="escalation_triggered", label="esc", data={
        "rule_id": str(rule.id), "triggered_by": "keyword", "context": "x"}).status_code == 201
    calendar = calendar_create(org=org, name="L2 calendar", timezone_name="UTC", location=l2,
                               weekly_hours=[{"day": "mon", "start": "00:00", "end": "24:00"}])
    assert runtime.event(call_id, type="appointment_booked", label="book", data={
        "calendar_id": str(calendar.id), "start_at": "2030-01-07T10:00:00Z",
        "end_at": "2030-01-07T10:30:00Z"}).status_code == 201
    assert runtime.complete(call_id, messages=[{"message": "Matrix message"}]).status_code in (200, 201)
    assert runtime.upload(call_id).status_code in (200, 201)
    call = runtime.call(call_id)
    subscription, _ = subscription_create(org=org, url="https://hooks.example.com/in", events=["call.ended"],
                                          location_ids=[l2.id])
    emit(org=org, type="call.ended", data={"call_id": str(call.id)}, location_id=l2.id)
    alert_rule = alert_rule_create(org=org, name="L2 watch", metric="calls", comparator="gt", threshold=0,
                                   window_minutes=60, location_ids=[l2.id], channels=[])
    erasure = erasure_request_create(org=org, phone_number="+14155550999", suppress=True)  # its worker never runs
    return {
        "alert_rule": alert_rule,
        "alert": Alert.objects.create(organization=org, rule=alert_rule, location=l2, metric="calls", value=3,
                                      threshold=0, window_minutes=60, triggered_at=call.started_at),
        "location": l2,
        "fact": fact_create(org=org, label="L2 hours", content="9-5", location=l2),
        "team_member": member,
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
        "call_field": call_field_create(org=org, name="party_size", label="Party size", type="number",
                                        location_ids=[l2.id]),
        "audit_event": type("Missing", (), {"pk": "00000000-0000-4000-8000-000000000000"})(),
        "audit_verification": type("Missing", (), {"pk": "00000000-0000-4000-8000-000000000000"})(),
        "export": type("NoSuchKind", (), {"pk": "payments.csv"})(),
        "erasure_request": erasure,
        "suppression": Suppression.objects.get(erasure_request=erasure),
    }


def _ids(world: dict) -> set[str]:
    return {str(obj.pk) for name, obj in world.items() if name not in ("audit_event", "audit_verification", "export")}


PRIVACY_WHAT = {"/v1/privacy/retention": "the retention policy",
                "/v1/privacy/erasure-requests": "erasure requests",
                "/v1/privacy/erasure-requests/{erasure_request}": "erasure requests",
                "/v1/privacy/suppressions": "suppressions", "/v1/privacy/suppressions/{suppression}": "suppressions"}


@pytest.mark.parametrize(("template", "method"), [(t, m) for t, m in CASES if t in PRIVACY_WHAT])
def test_a_key_of_l1_gets_403_on_the_organizations_privacy(world, scoped_api, l1, template, method):
    before = snapshot()
    response = request(scoped_api, method, template, world)
    verb = "read" if method == "get" else "changed"
    message = f"Limited to locations {l1.id}: {PRIVACY_WHAT[template]} cannot be {verb} within this scope."
    assert (response.status_code, response.json()) == (
        403, {"error": "forbidden", "details": {"message": message, "location_ids": [str(l1.id)]}})
    assert snapshot() == before


@pytest.mark.parametrize(("template", "method"), [(t, m) for t, m in OBJECT_CASES if _scoped_here(t)])
def test_a_key_of_l1_gets_404_for_l2_ids_and_changes_nothing(world, scoped_api, template, method):
    before = snapshot()
    response = request(scoped_api, method, template, world)
    assert (response.status_code, response.json()) == (404, {"error": "not_found"})
    assert snapshot() == before


@pytest.mark.parametrize("template", [t for t, m in CASES if "{" not in t and m == "get" and _scoped_here(t)])
def test_a_key_of_l1_lists_nothing_of_l2(world, scoped_api, template):
    response = request(scoped_api, "get", template, world)
    assert response.status_code == 200
    if template in EXPORTS:  # the header row alone
        body = b"".join(response.streaming_content).decode()
        assert body.count("\r\n") == 1 and [pk for pk in _ids(world) if pk in body] == []
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
    assert [pk for pk in _ids(world) if pk in body] == [], data


@pytest.mark.parametrize(("template", "method"), [(t, m) for t, m in CASES if t in AUDIT])
def test_a_key_of_l1_cannot_read_the_audit_trail(world, scoped_api, l1, template, method):
    response = request(scoped_api, method, template, world)
    message = f"Limited to locations {l1.id}: the audit trail cannot be read within this scope."
    assert (response.status_code, response.json()) == (
        403, {"error": "forbidden", "details": {"message": message, "location_ids": [str(l1.id)]}})
