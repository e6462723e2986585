"""GET /v1/audit-events, /v1/audit-events/{id}, /v1/audit-events/verify: the `audit` scope, org isolation, the
entry shape, newest first with cursors, the filters and their refusals."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from audit.models import AuditEvent
from orgs.services import organization_update
from tests.factories import make_key
from tests.support.clients import key_client
from tests.support.commands import me, run

pytestmark = pytest.mark.django_db


def test_keys_without_the_audit_scope_get_403_and_the_exact_body(read_api, api):
    for client in (read_api, api):
        for path in ("/v1/audit-events", "/v1/audit-events/verify",
                     "/v1/audit-events/00000000-0000-4000-8000-000000000000"):
            response = client.get(path)
            assert (response.status_code, response.json()) == (
                403, {"error": "insufficient_scope", "required": "audit"})


def test_me_shows_the_audit_scope(auditor, org, admin):
    assert auditor.get("/v1/me").json()["data"]["scopes"] == ["read", "audit"]
    _, plaintext = make_key(org, scope="read_write_audit", admin=admin)
    assert key_client(plaintext).get("/v1/me").json()["data"]["scopes"] == ["read", "write", "audit"]


def test_an_audit_key_without_write_still_cannot_write(auditor):
    response = auditor.post("/v1/contacts", {"phone_number": "+14155550999"}, format="json")
    assert (response.status_code, response.json()) == (403, {"error": "insufficient_scope", "required": "write"})


@pytest.mark.parametrize(("scopes", "expected"), [("read,audit", ["read", "audit"]),
                                                   ("read,write,audit", ["read", "write", "audit"])])
def test_create_api_key_accepts_the_audit_scopes(scopes, expected):
    org_id = run("create_org", "--name", "A", "--admin-email", "a@a.example", "--admin-password", "pw-12345678")[-1]
    plaintext = run("create_api_key", "--org", org_id, "--created-by", "a@a.example", "--name", "CI",
                    "--scopes", scopes)[-1]
    assert me(plaintext).json()["data"]["scopes"] == expected
    call_command("check")


def test_an_api_write_is_listed_with_its_actor_address_agent_and_request_id(org, api, write_key, auditor):
    response = api.post("/v1/webhook-subscriptions", {"url": "https://hooks.example.com/a", "events": ["call.ended"]},
                        format="json", HTTP_USER_AGENT="crm-sync/2.1", HTTP_X_REQUEST_ID="req-from-client-123",
                        REMOTE_ADDR="203.0.113.7")
    assert response.status_code == 201
    subscription_id = response.json()["data"]["id"]
    listed = auditor.get("/v1/audit-events", {"action": "webhook_subscription.created"})
    assert listed.status_code == 200
    [entry] = listed.json()["data"]
    key = write_key[0]
    assert entry["actor"] == {"type": "api_key", "id": str(key.id), "label": f"Write key ({key.key_prefix}...)"}
    assert entry["target"] == {"type": "webhook_subscription", "id": subscription_id,
                               "label": "https://hooks.example.com/…"}  # masked: issue 35 item 11
    assert entry["changes"] == {"url": [None, "https://hooks.example.com/…"], "events": [None, ["call.ended"]],
                                "description": [None, ""], "enabled": [None, True],
                                "rate_limit_per_second": [None, None], "location_ids": [None, None]}
    assert (entry["ip"], entry["user_agent"], entry["request_id"]) == ("203.0.113.7", "crm-sync/2.1",
                                                                       "req-from-client-123")
    assert set(entry) == {"id", "occurred_at", "action", "actor", "target", "changes", "ip", "user_agent",
                          "request_id", "chain"}
    assert entry["occurred_at"].endswith("Z") and len(entry["occurred_at"]) == 24
    assert auditor.get(f"/v1/audit-events/{entry['id']}").json()["data"] == entry


def test_the_list_is_newest_first_and_pages_with_cursors(org, admin, auditor):
    for i in range(5):
        organization_update(org=org, by=admin, name=f"Name {i}")
    ids = list(AuditEvent.objects.for_org(org).order_by("-occurred_at", "-id").values_list("id", flat=True))
    seen, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = auditor.get("/v1/audit-events", params).json()
        seen += [entry["id"] for entry in page["data"]]
        if not page["has_more"]:
            assert page["next_cursor"] is None
            break
        cursor = page["next_cursor"]
    assert seen == [str(pk) for pk in ids]


def test_filters(org, admin, auditor, audit_key):
    organization_update(org=org, by=admin, name="Filtered")
    key = audit_key[0]

    def actions(**params):
        response = auditor.get("/v1/audit-events", params)
        assert response.status_code == 200, response.json()
        return [entry["action"] for entry in response.json()["data"]]

    assert actions(action="organization.updated") == ["organization.updated"]
    assert set(actions(action="api_key.")) == {"api_key.created"}
    assert actions(target_id=str(key.id)) == ["api_key.created"]
    assert actions(target_id=str(org.id)) == ["organization.updated"]
    assert actions(actor_id="nobody") == []
    assert actions(since=(timezone.now() + timedelta(minutes=1)).isoformat()) == []
    assert "organization.updated" in actions(until=(timezone.now() + timedelta(minutes=1)).isoformat())
    assert actions(until=(timezone.now() - timedelta(days=1)).isoformat()) == []


@pytest.mark.parametrize(("params", "field"), [
    ({"colour": "red"}, "colour"),
    ({"since": "yesterday"}, "since"),
    ({"until": "2026-13-45"}, "until"),
    ({"action": "api_key.exploded"}, "action"),
    ({"action": "api_"}, "action"),
    ({"action": "nothing."}, "action"),
    ({"limit": "0"}, "limit"),
    ({"cursor": "forged"}, "cursor"),
])
def test_bad_filters_are_400_with_field_errors(auditor, params, field):
    response = auditor.get("/v1/audit-events", params)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "Validation failed"
    assert list(body["details"]["fieldErrors"]) == [field]


def test_another_orgs_entries_are_never_listed_nor_readable(org, other_org, admin, auditor, outsider):
    organization_update(org=other_org, by=outsider, name="Theirs")
    theirs = AuditEvent.objects.for_org(other_org).get(action="organization.updated")
    assert str(theirs.id) not in {entry["id"] for entry in auditor.get("/v1/audit-events").json()["data"]}
    response = auditor.get(f"/v1/audit-events/{theirs.id}")
    assert (response.status_code, response.json()) == (404, {"error": "not_found"})
    assert auditor.get("/v1/audit-events/not-a-uuid").status_code == 404


def test_verify_answers_the_chain_of_the_keys_org(org, admin, auditor):
    organization_update(org=org, by=admin, name="Verified")
    response = auditor.get("/v1/audit-events/verify")
    count = AuditEvent.objects.for_org(org).count()
    assert response.json() == {"data": {
        "intact": True, "entries_checked": count, "first_broken_id": None,  # the fields from before checkpoints
        "complete": True, "entries_hashed": count, "verified_through_seq": count, "head_seq": count,
    }}
    listed = auditor.get("/v1/audit-events").json()["data"]
    assert all(entry["chain"] is not None for entry in listed)  # verify sealed them
