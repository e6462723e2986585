"""GET/PATCH /v1/privacy/redaction: the organization's redaction policy (docs/privacy.md#redaction)."""

import pytest
from rest_framework.test import APIClient

from audit.models import AuditEvent
from core.sensitive import DETECTOR_VERSION
from knowledge.services import location_create
from orgs.models import Organization
from tests.factories import OrganizationFactory, make_key
from tests.support.matrix import snapshot

URL = "/v1/privacy/redaction"
DEFAULTS = {"kinds": ["card_number", "government_id", "bank_account"], "keep_recordings_with_sensitive_data": False,
            "detector_version": DETECTOR_VERSION}


def test_every_organization_starts_with_cards_government_ids_and_bank_accounts(api, read_api):
    assert read_api.get(URL).json() == {"data": DEFAULTS}
    assert Organization.objects.create(name="New").redaction_kinds == DEFAULTS["kinds"]


def test_patch_changes_the_policy_and_audits_it(api, org):
    response = api.patch(URL, {"kinds": ["email", "card_number"], "keep_recordings_with_sensitive_data": True},
                         format="json")
    assert response.status_code == 200
    expected = {"kinds": ["card_number", "email"], "keep_recordings_with_sensitive_data": True,
                "detector_version": DETECTOR_VERSION}
    assert response.json() == {"data": expected}
    assert api.get(URL).json() == {"data": expected}
    [entry] = AuditEvent.objects.filter(organization_id=org.pk, action="privacy.redaction_updated")
    assert entry.changes == {"kinds": [DEFAULTS["kinds"], ["card_number", "email"]],
                             "keep_recordings_with_sensitive_data": [False, True]}
    assert entry.actor_type == "api_key"


def test_a_patch_that_changes_nothing_records_nothing(api, org):
    assert api.patch(URL, {"kinds": DEFAULTS["kinds"]}, format="json").status_code == 200
    assert not AuditEvent.objects.filter(organization_id=org.pk, action="privacy.redaction_updated").exists()


@pytest.mark.parametrize(("body", "field", "message"), [
    ({"kinds": ["card_number", "names"]}, "kinds",
     "Unknown kind(s): names. Allowed: card_number, government_id, bank_account, email, phone_number, date_of_birth."),
    ({"keep_recordings_with_sensitive_data": "yes"}, "keep_recordings_with_sensitive_data", "Expected a boolean."),
    ({"keep_recordings_with_sensitive_data": 1}, "keep_recordings_with_sensitive_data", "Expected a boolean."),
    ({"kinds": "card_number"}, "kinds", None),
])
def test_bad_input_is_400_and_changes_nothing(api, body, field, message):
    before = snapshot()
    response = api.patch(URL, body, format="json")
    assert response.status_code == 400
    errors = response.json()["details"]["fieldErrors"]
    assert list(errors) == [field]
    if message:
        assert errors[field] == [message]
    assert snapshot() == before
    assert api.get(URL).json() == {"data": DEFAULTS}


def test_an_unknown_key_is_400(api):
    response = api.patch(URL, {"kinds": [], "detector_version": "9"}, format="json")
    assert response.status_code == 400
    assert response.json()["details"]["formErrors"] == ["Unrecognized key(s) in object: 'detector_version'"]


def test_a_key_limited_to_locations_reads_but_cannot_change_it(org, admin):
    location = location_create(org=org, name="L1", address="1 Main St", timezone="UTC", phone_number="+14155550111")
    _, plaintext = make_key(org, scope="read_write", admin=admin, location_ids=[location.pk])
    scoped = APIClient()
    scoped.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert scoped.get(URL).json() == {"data": DEFAULTS}
    scoped.get("/v1/me")
    before = snapshot()
    response = scoped.patch(URL, {"kinds": []}, format="json")
    message = f"Limited to locations {location.pk}: the redaction policy cannot be changed within this scope."
    assert (response.status_code, response.json()) == (
        403, {"error": "forbidden", "details": {"message": message, "location_ids": [str(location.pk)]}})
    assert snapshot() == before


def test_each_organization_has_its_own(api, other_api):
    assert api.patch(URL, {"kinds": ["email"]}, format="json").status_code == 200
    assert other_api.get(URL).json() == {"data": DEFAULTS}
    assert OrganizationFactory().redaction_kinds == DEFAULTS["kinds"]
