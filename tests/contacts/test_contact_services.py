"""contacts.services: E.164 normalization, the unique phone under races, and the calls app's get-or-create."""

import uuid

import pytest
from rest_framework.test import APIClient

from contacts import services
from contacts.models import Contact
from core.errors import Conflict, ValidationFailed
from tests.support.races import run_together


def test_contact_create_normalizes_and_stores_digits(org):
    contact = services.contact_create(org=org, phone_number="415-555-0100", name="  ", source="dashboard")
    assert (contact.phone_number, contact.phone_digits, contact.name) == ("+14155550100", "14155550100", None)


def test_contact_create_refuses_an_unknown_source(org):
    with pytest.raises(ValidationFailed) as raised:
        services.contact_create(org=org, phone_number="+14155550100", source="carrier_pigeon")
    assert list(raised.value.details["fieldErrors"]) == ["source"]


def test_duplicate_phone_raises_conflict_on_phone_number(org, contact):
    with pytest.raises(Conflict) as raised:
        services.contact_create(org=org, phone_number="(415) 555-0100", source="api")
    assert raised.value.details == {"field": "phone_number"}


def test_caller_creates_a_contact_from_the_call(org):
    call_id = uuid.uuid4()
    contact, created = services.contact_get_or_create_for_caller(
        org=org, phone_number="+14155550123", name="Caller", email="caller@example.com", call=call_id
    )
    assert created is True
    assert (contact.source, contact.first_call_id, contact.name) == ("inbound_call", call_id, "Caller")


def test_caller_accepts_a_call_object(org):
    class FakeCall:
        pk = uuid.uuid4()

    contact, _ = services.contact_get_or_create_for_caller(org=org, phone_number="4155550123", call=FakeCall())
    assert contact.first_call_id == FakeCall.pk


def test_a_known_caller_keeps_their_data_and_only_blanks_are_filled(org):
    known = services.contact_create(org=org, phone_number="+14155550123", name="Known", source="api")
    contact, created = services.contact_get_or_create_for_caller(
        org=org, phone_number="(415) 555-0123", name="Someone Else", email="new@example.com", call=uuid.uuid4()
    )
    assert created is False and contact.pk == known.pk
    assert (contact.name, contact.email, contact.source, contact.first_call_id) == (
        "Known", "new@example.com", "api", None,
    )


def test_an_invalid_email_heard_on_a_call_is_dropped_not_fatal(org):
    contact, created = services.contact_get_or_create_for_caller(
        org=org, phone_number="+14155550123", name=None, email="at gmail dot com", call=uuid.uuid4()
    )
    assert created and contact.email is None


def test_an_unparseable_caller_number_is_a_validation_error(org):
    with pytest.raises(ValidationFailed):
        services.contact_get_or_create_for_caller(org=org, phone_number="anonymous", name=None, email=None, call=None)
    assert not Contact.objects.exists()


def test_contact_update_refuses_unknown_fields(contact):
    with pytest.raises(ValidationFailed):
        services.contact_update(contact=contact, source="api")


# --- races (real concurrent transactions) ---------------------------------------------------------------------

def _run_concurrently(count, target):
    outcomes = run_together(*(lambda index=index: target(index) for index in range(count)), timeout=60)
    errors = [outcome for outcome in outcomes if isinstance(outcome, Exception)]
    assert not errors, errors
    return outcomes


@pytest.mark.django_db(transaction=True)
def test_concurrent_creates_of_one_number_give_one_201_and_409s(write_key, org):
    # Exactly one row, the rest 409, never a 500.
    plaintext = write_key[1]
    spellings = ["+14155550100", "+1 (415) 555-0100", "415-555-0100", "(415) 555 0100", "4155550100", "+1.415.555.0100"]

    def create(index):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
        client.raise_request_exception = False
        response = client.post("/v1/contacts", {"phone_number": spellings[index]}, format="json")
        return response.status_code, response.json()

    results = _run_concurrently(len(spellings), create)
    statuses = sorted(status for status, _ in results)
    assert statuses == [201] + [409] * (len(spellings) - 1)
    assert all(body == {"error": "conflict", "details": {"field": "phone_number"}}
               for status, body in results if status == 409)
    assert Contact.objects.filter(organization=org).count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_callers_from_one_new_number_share_one_contact(org):
    call_ids = [uuid.uuid4() for _ in range(5)]

    def caller(index):
        contact, created = services.contact_get_or_create_for_caller(
            org=org, phone_number="+14155550111", name=f"Caller {index}", email=None, call=call_ids[index]
        )
        return contact.pk, created

    results = _run_concurrently(len(call_ids), caller)
    assert len({pk for pk, _ in results}) == 1
    assert sorted(created for _, created in results) == [False] * 4 + [True]
    contact = Contact.objects.get()
    assert contact.first_call_id in call_ids and contact.source == "inbound_call"
