"""Contract tests of /v1/webhook-subscriptions: statuses, exact bodies, secrets, tenancy, scopes."""

import json
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from core.timefmt import iso_ms
from webhooks.models import EVENT_TYPES, Delivery, DeliveryAttempt, Subscription
from webhooks.services import emit

pytestmark = pytest.mark.usefixtures("fake_dns")
URL = "https://hooks.example.com/in"
TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def create(api, **body):
    return api.post("/v1/webhook-subscriptions", {"url": URL, "events": ["call.ended"], **body}, format="json")


def validation(field_errors=None, form_errors=()):
    details = {"formErrors": list(form_errors), "fieldErrors": field_errors or {}}
    return {"error": "Validation failed", "details": details}


def test_create_returns_201_with_the_secret_once_and_the_read_shape(api, org):
    response = create(api, events=["call.ended", "contact.created"], description="CRM sync")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"data", "secret", "warning"}
    assert re.fullmatch(r"whsec_[A-Za-z0-9+/]{43}=", body["secret"])
    assert "not displayed again" in body["warning"]
    data = body["data"]
    sub = Subscription.objects.get(pk=data["id"])
    assert data == {
        "id": str(sub.pk), "url": URL, "events": ["call.ended", "contact.created"], "enabled": True,
        "description": "CRM sync", "secret_preview": body["secret"][:8], "rate_limit_per_second": None,
        "location_ids": None,
        "created_at": iso_ms(sub.created_at), "updated_at": iso_ms(sub.updated_at),
    }
    assert TS.match(data["created_at"])
    assert sub.organization == org and sub.secret == body["secret"]
    assert body["secret"] not in sub.secret_encrypted


def test_reads_never_show_the_secret(api):
    created = create(api).json()
    sub_id, secret = created["data"]["id"], created["secret"]
    one = api.get(f"/v1/webhook-subscriptions/{sub_id}")
    listed = api.get("/v1/webhook-subscriptions")
    patched = api.patch(f"/v1/webhook-subscriptions/{sub_id}", {"description": "x"}, format="json")
    for response in (one, listed, patched):
        assert response.status_code == 200
        assert secret not in response.content.decode() and "secret\"" not in response.content.decode()
    assert one.json() == {"data": created["data"]}
    assert listed.json() == {"data": [created["data"]], "has_more": False, "next_cursor": None}


def test_list_is_newest_first_and_cursor_paginated(api):
    ids = [create(api).json()["data"]["id"] for _ in range(3)]
    first = api.get("/v1/webhook-subscriptions?limit=2").json()
    assert [s["id"] for s in first["data"]] == ids[::-1][:2] and first["has_more"] is True
    second = api.get(f"/v1/webhook-subscriptions?limit=2&cursor={first['next_cursor']}").json()
    assert [s["id"] for s in second["data"]] == [ids[0]]
    assert (second["has_more"], second["next_cursor"]) == (False, None)
    assert api.get("/v1/webhook-subscriptions?limit=0").json() == validation(
        {"limit": ["Ensure this value is greater than or equal to 1."]}
    )
    bad = api.get("/v1/webhook-subscriptions?cursor=forged")
    assert bad.status_code == 400 and bad.json() == validation({"cursor": ["Invalid cursor."]})


def test_patch_updates_fields_and_enabling_clears_the_disabled_reason(api):
    sub_id = create(api).json()["data"]["id"]
    Subscription.objects.filter(pk=sub_id).update(enabled=False, disabled_reason="The endpoint answered 410 Gone.")
    response = api.patch(
        f"/v1/webhook-subscriptions/{sub_id}",
        {"url": "https://api.partner.io/hooks", "events": ["contact.created"], "enabled": True, "description": "d"},
        format="json",
    )
    assert response.status_code == 200
    data = response.json()["data"]
    assert (data["url"], data["events"], data["enabled"], data["description"]) == (
        "https://api.partner.io/hooks", ["contact.created"], True, "d"
    )
    assert Subscription.objects.get(pk=sub_id).disabled_reason == ""


def test_delete_gives_204_without_body_then_404(api):
    sub_id = create(api).json()["data"]["id"]
    response = api.delete(f"/v1/webhook-subscriptions/{sub_id}")
    assert response.status_code == 204 and response.content == b""
    assert api.get(f"/v1/webhook-subscriptions/{sub_id}").json() == {"error": "not_found"}


@pytest.mark.parametrize(
    ("body", "field_errors", "form_errors"),
    [
        ({"events": ["call.ended"]}, {"url": ["This field is required."]}, []),
        ({"url": URL}, {"events": ["This field is required."]}, []),
        ({"url": URL, "events": []}, {"events": ["Choose at least one event type."]}, []),
        ({"url": "http://hooks.example.com/in", "events": ["call.ended"]}, {"url": ["The URL must use https://."]}, []),
        ({"url": "ftp://hooks.example.com/in", "events": ["call.ended"]}, {"url": ["Enter a valid https:// URL."]}, []),
        ({"url": "https://user:pw@hooks.example.com/", "events": ["call.ended"]},
         {"url": ["The URL must not contain credentials."]}, []),
        ({"url": "https://hooks.example.com/" + "a" * 2030, "events": ["call.ended"]},
         {"url": ["Ensure this field has no more than 2048 characters."]}, []),
        ({"url": URL, "events": ["call.ended", "call.ended"]}, {"events": ["Event types must not repeat."]}, []),
        ({"url": URL, "events": ["call.started"]}, {"events": [
            f"Unknown event type(s): call.started. Allowed: {', '.join(EVENT_TYPES)}."]}, []),
        ({"url": URL, "events": ["call.ended"], "secret": "x"}, {}, ["Unrecognized key(s) in object: 'secret'"]),
        (["not", "an", "object"], {}, ["Expected a JSON object as the request body."]),
    ],
)
def test_create_validation_failures_are_400_with_details_and_write_nothing(api, body, field_errors, form_errors):
    response = api.post("/v1/webhook-subscriptions", body, format="json")
    assert response.status_code == 400
    assert response.json() == validation(field_errors, form_errors)
    assert not Subscription.objects.exists()


def test_more_event_types_than_the_catalog_has_are_refused(api):
    response = create(api, events=["call.ended"] * (len(EVENT_TYPES) + 1))
    assert response.status_code == 400
    assert (f"Ensure this field has no more than {len(EVENT_TYPES)} elements."
            in response.json()["details"]["fieldErrors"]["events"])


def test_an_unresolvable_name_is_accepted_at_create(api):
    assert create(api, url="https://not-yet-in-dns.example.net/in").status_code == 201


def test_rotate_secret_returns_a_new_secret_once_and_validates_the_grace_period(api):
    created = create(api).json()
    sub_id = created["data"]["id"]
    response = api.post(f"/v1/webhook-subscriptions/{sub_id}/rotate-secret", {"grace_period_seconds": 3600},
                        format="json")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"data", "secret", "warning"} and body["secret"] != created["secret"]
    assert body["data"]["secret_preview"] == body["secret"][:8]
    sub = Subscription.objects.get(pk=sub_id)
    assert sub.signing_secrets(timezone.now()) == [body["secret"], created["secret"]]
    assert sub.signing_secrets(timezone.now() + timedelta(seconds=3601)) == [body["secret"]]
    too_long = api.post(f"/v1/webhook-subscriptions/{sub_id}/rotate-secret", {"grace_period_seconds": 86401},
                        format="json")
    assert too_long.status_code == 400
    assert too_long.json() == validation(
        {"grace_period_seconds": ["Ensure this value is less than or equal to 86400."]}
    )
    assert Subscription.objects.get(pk=sub_id).secret == body["secret"]


def test_deliveries_log_retry_and_recover(api, org):
    sub_id = create(api).json()["data"]["id"]
    event = emit(org=org, type="call.ended", data={"call_id": "c"})
    delivery = Delivery.objects.get(subscription_id=sub_id)
    Delivery.objects.filter(pk=delivery.pk).update(status="failed", attempt_count=10, last_status_code=500,
                                                   last_error="HTTP 500", next_attempt_at=None)
    DeliveryAttempt.objects.create(organization=org, delivery=delivery, number=1, status_code=500, duration_ms=12,
                                   response_body="oops", error="HTTP 500")
    log = api.get(f"/v1/webhook-subscriptions/{sub_id}/deliveries")
    assert log.status_code == 200
    item = log.json()["data"][0]
    assert item["id"] == str(delivery.pk) and item["event_id"] == event.id and item["event_type"] == "call.ended"
    assert item["status"] == "failed" and item["attempt_count"] == 10 and item["last_status_code"] == 500
    assert item["attempts"] == [{
        "number": 1, "at": item["attempts"][0]["at"], "trigger": "scheduled", "status_code": 500,
        "duration_ms": 12, "response_body": "oops", "error": "HTTP 500",
    }]
    retried = api.post(f"/v1/webhook-subscriptions/{sub_id}/deliveries/{delivery.pk}/retry")
    assert retried.status_code == 202 and retried.json()["data"]["status"] == "pending"
    delivery.refresh_from_db()
    assert delivery.next_trigger == "manual" and delivery.next_attempt_at is not None

    Delivery.objects.filter(pk=delivery.pk).update(status="failed")
    since = iso_ms(timezone.now() - timedelta(days=1))
    recovered = api.post(f"/v1/webhook-subscriptions/{sub_id}/recover", {"since": since}, format="json")
    assert recovered.status_code == 202 and recovered.json() == {"data": {"requeued": 1}}
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempt_count) == ("pending", 0)
    too_old = api.post(f"/v1/webhook-subscriptions/{sub_id}/recover",
                       {"since": iso_ms(timezone.now() - timedelta(days=31))}, format="json")
    assert too_old.status_code == 400
    assert too_old.json() == validation({"since": ["Must be within the last 30 days."]})


ENDPOINTS = [
    ("get", "/v1/webhook-subscriptions/{id}", None),
    ("patch", "/v1/webhook-subscriptions/{id}", {"description": "hacked"}),
    ("delete", "/v1/webhook-subscriptions/{id}", None),
    ("post", "/v1/webhook-subscriptions/{id}/rotate-secret", {}),
    ("get", "/v1/webhook-subscriptions/{id}/deliveries", None),
    ("post", "/v1/webhook-subscriptions/{id}/deliveries/{delivery}/retry", None),
    ("post", "/v1/webhook-subscriptions/{id}/recover", {"since": "2026-11-01T00:00:00Z"}),
]


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS)
def test_another_orgs_subscription_is_a_plain_404_and_nothing_changes(api, other_api, org, method, path, body):
    sub_id = create(api).json()["data"]["id"]
    emit(org=org, type="call.ended", data={})
    delivery = Delivery.objects.get(subscription_id=sub_id)
    before = Subscription.objects.filter(pk=sub_id).values().get()
    response = getattr(other_api, method)(path.format(id=sub_id, delivery=delivery.pk), body, format="json")
    assert response.status_code == 404 and response.json() == {"error": "not_found"}
    missing = getattr(api, method)(path.format(id="00000000-0000-0000-0000-000000000000", delivery=delivery.pk),
                                   body, format="json")
    assert missing.status_code == 404 and missing.content == response.content
    assert Subscription.objects.filter(pk=sub_id).values().get() == before
    assert Delivery.objects.get(pk=delivery.pk).next_trigger == "scheduled"
    assert other_api.get("/v1/webhook-subscriptions").json()["data"] == []


def test_a_delivery_of_another_subscription_is_404(api, org):
    first = create(api).json()["data"]["id"]
    second = create(api).json()["data"]["id"]
    emit(org=org, type="call.ended", data={})
    delivery = Delivery.objects.get(subscription_id=second)
    response = api.post(f"/v1/webhook-subscriptions/{first}/deliveries/{delivery.pk}/retry")
    assert response.status_code == 404 and response.json() == {"error": "not_found"}


WRITES = [
    ("post", "/v1/webhook-subscriptions", {"url": URL, "events": ["call.ended"]}),
    *[(m, p, b) for m, p, b in ENDPOINTS if m != "get"],
]


@pytest.mark.parametrize(("method", "path", "body"), WRITES)
def test_a_read_key_on_a_write_is_403_and_writes_nothing(api, read_api, org, method, path, body):
    sub_id = create(api).json()["data"]["id"]
    emit(org=org, type="call.ended", data={})
    delivery = Delivery.objects.get(subscription_id=sub_id)
    before = list(Subscription.objects.values())
    response = getattr(read_api, method)(path.format(id=sub_id, delivery=delivery.pk), body, format="json")
    assert response.status_code == 403
    assert response.json() == {"error": "insufficient_scope", "required": "write"}
    assert list(Subscription.objects.values()) == before
    assert Delivery.objects.get(pk=delivery.pk).next_trigger == "scheduled"


@pytest.mark.parametrize(("method", "path", "body"), [("get", "/v1/webhook-subscriptions", None), *WRITES])
def test_no_key_is_401(db, anon_api, method, path, body):
    response = getattr(anon_api, method)(path.format(id="x", delivery="y"), body, format="json")
    assert response.status_code == 401 and response.json() == {"error": "unauthorized"}
    assert not Subscription.objects.exists()


def test_read_key_can_read(api, read_api):
    sub_id = create(api).json()["data"]["id"]
    assert read_api.get(f"/v1/webhook-subscriptions/{sub_id}").status_code == 200
    assert read_api.get("/v1/webhook-subscriptions").status_code == 200


def test_put_is_405(api):
    sub_id = create(api).json()["data"]["id"]
    response = api.put(f"/v1/webhook-subscriptions/{sub_id}", {}, format="json")
    assert response.status_code == 405 and response.json() == {"error": "method_not_allowed"}


def test_retry_and_recover_are_documented_as_202(db):
    schema = json.loads(Client().get("/api/openapi.json").content)
    for path in ("/v1/webhook-subscriptions/{id}/deliveries/{delivery_id}/retry",
                 "/v1/webhook-subscriptions/{id}/recover"):
        responses = schema["paths"][path]["post"]["responses"]
        assert "202" in responses and not {"200", "201"} & set(responses), (path, sorted(responses))


def test_rate_limit_per_second_is_set_on_create_changed_by_patch_and_cleared_with_null(api):
    created = create(api, rate_limit_per_second=5)
    assert created.status_code == 201 and created.json()["data"]["rate_limit_per_second"] == 5
    sub_id = created.json()["data"]["id"]
    assert Subscription.objects.get(pk=sub_id).rate_limit_per_second == 5
    patched = api.patch(f"/v1/webhook-subscriptions/{sub_id}", {"rate_limit_per_second": 1000}, format="json")
    assert patched.status_code == 200 and patched.json()["data"]["rate_limit_per_second"] == 1000
    assert api.get(f"/v1/webhook-subscriptions/{sub_id}").json()["data"]["rate_limit_per_second"] == 1000
    cleared = api.patch(f"/v1/webhook-subscriptions/{sub_id}", {"rate_limit_per_second": None}, format="json")
    assert cleared.status_code == 200 and cleared.json()["data"]["rate_limit_per_second"] is None
    assert Subscription.objects.get(pk=sub_id).rate_limit_per_second is None


@pytest.mark.parametrize("value", [0, 1001, -3, 2.5, "5", True, [5]])
def test_a_rate_limit_out_of_range_or_not_an_integer_is_a_400_naming_the_field_and_changes_nothing(api, value):
    refused = create(api, rate_limit_per_second=value)
    assert refused.status_code == 400
    body = refused.json()
    assert body["error"] == "Validation failed" and set(body["details"]["fieldErrors"]) == {"rate_limit_per_second"}
    assert not Subscription.objects.exists()
    sub_id = create(api, rate_limit_per_second=7).json()["data"]["id"]
    patched = api.patch(f"/v1/webhook-subscriptions/{sub_id}", {"rate_limit_per_second": value}, format="json")
    assert patched.status_code == 400
    assert set(patched.json()["details"]["fieldErrors"]) == {"rate_limit_per_second"}
    assert Subscription.objects.get(pk=sub_id).rate_limit_per_second == 7


def test_the_service_refuses_a_rate_limit_out_of_range_whatever_the_interface(org):
    from core.errors import ValidationFailed
    from webhooks.services import subscription_create

    for value in (0, 1001, "5", 2.5):
        with pytest.raises(ValidationFailed) as refused:
            subscription_create(org=org, url=URL, events=["call.ended"], rate_limit_per_second=value)
        assert set(refused.value.details["fieldErrors"]) == {"rate_limit_per_second"}
    assert not Subscription.objects.exists()
