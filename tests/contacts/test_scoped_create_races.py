"""Two principals limited to a location create one new number at the same moment: one inserts, the other's insert
meets the unique constraint, reads the contact it could not see and is answered as a creation of it (the same id);
never two rows, a 409 or a 500. Five rounds, two threads released together."""

import pytest

from contacts.models import Contact
from contacts.services import contact_create
from knowledge.services import location_create
from orgs.tenancy import scoped
from tests.support.races import run_together

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_scoped_creates_of_one_new_number_give_one_contact_and_two_creations(org):
    l1 = location_create(org=org, name="L1", address="x", timezone="UTC", phone_number="+14155550100")
    within = scoped(org, [l1.pk])
    for n in range(5):
        phone = f"+1415555020{n}"
        outcomes = run_together(*(lambda name=name, phone=phone: contact_create(
            org=within, phone_number=phone, name=name, source="api") for name in ("Ann", "Bob")))
        assert all(isinstance(outcome, Contact) for outcome in outcomes), outcomes
        [stored] = Contact.objects.filter(organization=org, phone_number=phone)
        assert [outcome.pk for outcome in outcomes] == [stored.pk, stored.pk]
        assert sorted(outcome.name for outcome in outcomes) == ["Ann", "Bob"]
        assert stored.name in ("Ann", "Bob")
