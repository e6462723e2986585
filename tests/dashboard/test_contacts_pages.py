"""Contacts pages: search, create, edit, a contact's page with its calls. Every member may write contacts; the
rules are contacts.services' (E.164, one contact per number, 409 as a form error on phone_number)."""

import uuid

import pytest
from django.utils import timezone

from calls.models import Call
from contacts.models import Contact
from contacts.services import contact_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def contact(org):
    return contact_create(org=org, phone_number="+14155550100", name="Ada Lovelace", email="ada@example.com",
                          source="api")


@pytest.fixture
def other_contact(other_org):
    return contact_create(org=other_org, phone_number="+14155550199", name="Hidden Person", source="api")


def test_anonymous_visitors_are_sent_to_log_in(client, contact):
    for path in ["/contacts/", "/contacts/new/", f"/contacts/{contact.pk}/", f"/contacts/{contact.pk}/edit/"]:
        response = client.get(path)
        assert response.status_code == 302 and response["Location"].startswith("/login/?next=")
    assert client.post("/contacts/new/", {"phone_number": "+14155550111"}).status_code == 302
    assert Contact.objects.count() == 1


def test_admins_and_members_see_list_detail_and_forms(admin_client, member_client, contact):
    for client in (admin_client, member_client):
        page = client.get("/contacts/")
        assert page.status_code == 200
        assert "Ada Lovelace" in page.content.decode() and "+14155550100" in page.content.decode()
        assert client.get(f"/contacts/{contact.pk}/").status_code == 200
        assert client.get("/contacts/new/").status_code == 200
        assert client.get(f"/contacts/{contact.pk}/edit/").status_code == 200


def test_search_matches_name_email_and_phone_digits(admin_client, org, contact):
    contact_create(org=org, phone_number="+442071838750", name="Grace Hopper", email="grace@navy.example",
                   source="api")
    for query, expected, absent in [
        ("ada", "Ada Lovelace", "Grace Hopper"),
        ("NAVY", "Grace Hopper", "Ada Lovelace"),
        ("(415) 555", "Ada Lovelace", "Grace Hopper"),
        ("2071", "Grace Hopper", "Ada Lovelace"),
    ]:
        body = admin_client.get("/contacts/", {"q": query}).content.decode()
        assert expected in body and absent not in body, query
    body = admin_client.get("/contacts/", {"q": "nobody-here"}).content.decode()
    assert "No contact matches" in body


def test_another_orgs_contacts_are_404_and_never_listed(outsider_client, contact):
    hidden = outsider_client.get(f"/contacts/{contact.pk}/")
    missing = outsider_client.get(f"/contacts/{uuid.uuid4()}/")
    assert hidden.status_code == missing.status_code == 404
    assert [t.name for t in hidden.templates] == [t.name for t in missing.templates]
    assert outsider_client.get(f"/contacts/{contact.pk}/edit/").status_code == 404
    response = outsider_client.post(f"/contacts/{contact.pk}/edit/", {"phone_number": "+14155550100", "name": "X"})
    assert response.status_code == 404
    contact.refresh_from_db()
    assert contact.name == "Ada Lovelace"
    assert "Ada Lovelace" not in outsider_client.get("/contacts/", {"q": "ada"}).content.decode()


def test_a_member_creates_a_contact_normalized_to_e164(member_client, org):
    response = member_client.post("/contacts/new/", {"phone_number": "(415) 555-0123", "name": "  New Caller ",
                                                     "email": "", "notes": "Prefers mornings"})
    contact = Contact.objects.get(organization=org)
    assert response.status_code == 302 and response["Location"] == f"/contacts/{contact.pk}/"
    assert (contact.phone_number, contact.name, contact.email, contact.source) == (
        "+14155550123", "New Caller", None, "dashboard"
    )


def test_a_bad_phone_is_refused_inline_without_writing(admin_client):
    response = admin_client.post("/contacts/new/", {"phone_number": "12", "name": "Nobody"})
    assert response.status_code == 200
    assert response.context["form"].errors["phone_number"]
    assert 'data-testid="error-phone_number"' in response.content.decode()
    assert Contact.objects.count() == 0


def test_a_duplicate_phone_is_the_409_shown_on_the_phone_field(admin_client, contact):
    # "+1 (415) 555-0100" normalizes to the existing contact's number.
    response = admin_client.post("/contacts/new/", {"phone_number": "+1 (415) 555-0100", "name": "Twin"})
    assert response.status_code == 200
    assert response.context["form"].errors["phone_number"] == ["A contact with this phone number already exists."]
    body = response.content.decode()
    assert 'data-testid="error-phone_number"' in body and 'aria-invalid="true"' in body
    assert Contact.objects.count() == 1


def test_edit_saves_and_a_clash_on_edit_is_a_form_error(member_client, org, contact):
    other = contact_create(org=org, phone_number="+14155550177", source="api")
    response = member_client.post(f"/contacts/{other.pk}/edit/", {"phone_number": "+14155550100", "name": "B"})
    assert response.status_code == 200
    assert response.context["form"].errors["phone_number"] == ["A contact with this phone number already exists."]
    other.refresh_from_db()
    assert (other.phone_number, other.name) == ("+14155550177", None)

    response = member_client.post(f"/contacts/{contact.pk}/edit/", {"phone_number": "+14155550100",
                                                                     "name": "Ada King", "email": "bad"})
    assert response.status_code == 200 and response.context["form"].errors["email"]
    response = member_client.post(f"/contacts/{contact.pk}/edit/", {"phone_number": "+14155550100",
                                                                     "name": "Ada King", "email": ""})
    assert response.status_code == 302
    contact.refresh_from_db()
    assert (contact.name, contact.email) == ("Ada King", None)


def test_the_contact_page_lists_its_calls_only(admin_client, org, other_org, contact, other_contact):
    now = timezone.now()
    Call.objects.create(organization=org, runtime_call_id="rt-1", started_at=now, contact=contact,
                        summary="Ordered two pizzas", outcome="order", duration_seconds=95, scorable=True, score=88)
    Call.objects.create(organization=org, runtime_call_id="rt-2", started_at=now, summary="Someone else")
    Call.objects.create(organization=other_org, runtime_call_id="rt-3", started_at=now, contact=other_contact,
                        summary="Other org call")
    body = admin_client.get(f"/contacts/{contact.pk}/").content.decode()
    assert "Ordered two pizzas" in body and "Someone else" not in body and "Other org call" not in body
    assert body.count('data-testid="contact-call-row"') == 1


def test_every_form_carries_a_csrf_token_and_labels(admin_client, contact):
    for path in ["/contacts/new/", f"/contacts/{contact.pk}/edit/"]:
        body = admin_client.get(path).content.decode()
        assert "csrfmiddlewaretoken" in body
        for field in ("phone_number", "name", "email", "notes"):
            assert f'<label for="id_{field}"' in body


def test_posts_without_csrf_are_refused(admin, org):
    from django.test import Client

    from tests.support.clients import PASSWORD

    client = Client(enforce_csrf_checks=True)
    assert client.login(username=admin.username, password=PASSWORD)
    response = client.post("/contacts/new/", {"phone_number": "+14155550123"})
    assert response.status_code == 403
    assert Contact.objects.count() == 0
