"""A JSON value of the wrong type is refused, never coerced: `4155550100` where a string is expected, `"true"` or `1`
for a boolean, `"60"` for an integer. 400 with the field named, on every /v1 and runtime input, and nothing written.
"""

import pytest

from calls.models import Call, CallbackRequest
from contacts.models import Contact
from knowledge.models import Fact, TeamMember
from tests.support.meetings import ingest_body, post_meeting
from tests.support.runtime import Runtime, completion, runtime_client
from webhooks.models import Subscription
from webhooks.services import subscription_create


def field_error(response, field, message):
    assert response.status_code == 400, response.content
    assert response.json() == {"error": "Validation failed",
                               "details": {"formErrors": [], "fieldErrors": {field: [message]}}}


@pytest.mark.parametrize("body, field, message", [
    ({"phone_number": 4155550100}, "phone_number", "Expected a string."),
    ({"phone_number": "+14155550100", "name": True}, "name", "Expected a string."),
    ({"phone_number": "+14155550100", "email": ["a@example.com"]}, "email", "Expected a string."),
    ({"phone_number": "+14155550100", "notes": {"text": "x"}}, "notes", "Expected a string."),
])
def test_contact_create_refuses_non_strings(api, body, field, message):
    field_error(api.post("/v1/contacts", body, format="json"), field, message)
    assert not Contact.objects.exists()


def test_contact_update_refuses_a_number(api, org):
    contact = Contact.objects.create(organization=org, phone_number="+14155550100", phone_digits="14155550100")
    field_error(api.patch(f"/v1/contacts/{contact.pk}", {"name": 42}, format="json"), "name", "Expected a string.")
    contact.refresh_from_db()
    assert contact.name is None


def test_facts_and_team_members_refuse_non_strings(api, org):
    field_error(api.post("/v1/facts", {"label": 1.5, "content": "x"}, format="json"), "label", "Expected a string.")
    field_error(api.post("/v1/team-members", {"name": "Ana", "phone_number": 4155550100}, format="json"),
                "phone_number", "Expected a string.")
    assert not Fact.objects.exists() and not TeamMember.objects.exists()


def test_webhook_inputs_refuse_coercible_values(api, org):
    url = "https://hooks.example.com/x"
    field_error(api.post("/v1/webhook-subscriptions", {"url": url, "events": ["call.ended", 5]}, format="json"),
                "events", "Item 1: Expected a string.")
    field_error(api.post("/v1/webhook-subscriptions", {"url": url, "events": ["call.ended"], "enabled": "true"},
                         format="json"), "enabled", "Expected a boolean.")
    assert not Subscription.objects.exists()
    subscription, _ = subscription_create(org=org, url=url, events=["call.ended"])
    field_error(api.patch(f"/v1/webhook-subscriptions/{subscription.pk}", {"enabled": 0}, format="json"),
                "enabled", "Expected a boolean.")
    field_error(api.post(f"/v1/webhook-subscriptions/{subscription.pk}/rotate-secret",
                         {"grace_period_seconds": "60"}, format="json"), "grace_period_seconds", "Expected an integer.")
    field_error(api.post(f"/v1/webhook-subscriptions/{subscription.pk}/rotate-secret",
                         {"grace_period_seconds": True}, format="json"), "grace_period_seconds", "Expected an integer.")
    subscription.refresh_from_db()
    assert subscription.enabled is True and subscription.previous_secret_encrypted == ""


def test_follow_ups_refuse_a_number_for_handled(api, org):
    runtime = Runtime(org)
    call_id, _ = runtime.start()
    assert runtime.event(call_id, type="callback_requested", data={"reason": "Call me back"}).status_code == 201
    callback = CallbackRequest.objects.get()
    field_error(api.patch(f"/v1/callbacks/{callback.pk}", {"handled": 1}, format="json"),
                "handled", "Expected a boolean.")
    callback.refresh_from_db()
    assert callback.handled_at is None


def test_the_runtime_refuses_non_strings(org):
    runtime = Runtime(org)
    response = runtime.client.post(f"{runtime.prefix}/calls", {"call_id": 12345, "started_at": "2026-11-01T10:00:00Z"},
                                   format="json")
    field_error(response, "call_id", "Expected a string.")
    assert not Call.objects.exists()
    call_id, _ = runtime.start()
    response = runtime.complete(call_id, summary=7)
    field_error(response, "summary", "Expected a string.")
    assert runtime.call(call_id).status == Call.Status.IN_PROGRESS


def test_the_meetings_runtime_refuses_non_strings(db):
    from tests.factories import OrganizationFactory

    org = OrganizationFactory(meetings_enabled=True)
    response = post_meeting(runtime_client(), org, ingest_body(title=2026))
    field_error(response, "title", "Expected a string.")


def test_strings_null_and_right_types_still_pass(api):
    response = api.post("/v1/contacts", {"phone_number": "+14155550100", "name": None}, format="json")
    assert response.status_code == 201, response.content


def test_the_completion_fixture_is_valid_as_sent(org):
    """Guards the runtime test above: it fails on `summary` only because of its type."""
    runtime = Runtime(org)
    call_id, _ = runtime.start()
    assert runtime.complete(call_id, summary="Fine").status_code == 200
    assert completion()["summary"]


def test_lengths_are_measured_as_sent_not_after_trimming(api, org):
    """DRF trims whitespace before its max_length check; the schema's maxLength counts what was sent."""
    padded = "x" + " " * 10_000  # 10,001 characters, 1 after trimming
    response = api.post("/v1/facts", {"label": "Padded", "content": padded}, format="json")
    field_error(response, "content", "Ensure this field has no more than 10000 characters.")
    response = api.post("/v1/escalation-rules", {"name": "R", "keywords": ["ok", "k" + " " * 100],
                                                 "destination_type": "phone", "destination_phone": "+14155550100"},
                        format="json")
    field_error(response, "keywords", "Item 1: Ensure this field has no more than 100 characters.")
    assert not Fact.objects.exists()
