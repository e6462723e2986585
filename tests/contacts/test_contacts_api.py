"""/v1/contacts: create with E.164 normalization and 409, search, read, PATCH; tenancy, scope and ids."""

import pytest

from contacts.models import Contact
from core.timefmt import iso_ms

NOT_FOUND = {"error": "not_found"}
INVALID_PHONE = "Enter a valid phone number (E.164, or a national number of the organization's region)."


def contact_body(contact: Contact) -> dict:
    return {
        "id": str(contact.id),
        "phone_number": contact.phone_number,
        "name": contact.name,
        "email": contact.email,
        "notes": contact.notes,
        "source": contact.source,
        "first_call_id": str(contact.first_call_id) if contact.first_call_id else None,
        "created_at": iso_ms(contact.created_at),
        "updated_at": iso_ms(contact.updated_at),
    }


def snapshot():
    return sorted(Contact.objects.values_list("id", "phone_number", "name", "email", "notes", "updated_at"))


def test_create_returns_201_with_the_normalized_contact(api, org):
    response = api.post(
        "/v1/contacts",
        {"phone_number": "(415) 555-0100", "name": "Maria", "email": "maria@example.com", "notes": "VIP"},
        format="json",
    )
    assert response.status_code == 201
    contact = Contact.objects.get()
    assert contact.organization_id == org.id
    assert (contact.phone_number, contact.phone_digits, contact.source) == ("+14155550100", "14155550100", "api")
    assert response.json() == {"data": contact_body(contact)}
    assert response.json()["data"]["first_call_id"] is None


def test_create_with_only_a_phone_number_gives_nulls(api):
    data = api.post("/v1/contacts", {"phone_number": "+14155550100"}, format="json").json()["data"]
    assert (data["name"], data["email"], data["notes"], data["source"]) == (None, None, None, "api")


def test_the_orgs_default_region_decides_national_numbers(api, org):
    org.default_phone_region = "GB"
    org.save()
    response = api.post("/v1/contacts", {"phone_number": "020 7946 0958"}, format="json")
    assert response.status_code == 201
    assert response.json()["data"]["phone_number"] == "+442079460958"


def test_one_number_in_two_spellings_is_409(api):
    assert api.post("/v1/contacts", {"phone_number": "+1 (415) 555-0100"}, format="json").status_code == 201
    response = api.post("/v1/contacts", {"phone_number": "+14155550100", "name": "Dup"}, format="json")
    assert response.status_code == 409
    assert response.json() == {"error": "conflict", "details": {"field": "phone_number"}}
    assert Contact.objects.count() == 1


def test_the_same_number_in_another_org_is_fine(api, other_contact):
    assert api.post("/v1/contacts", {"phone_number": other_contact.phone_number}, format="json").status_code == 201


@pytest.mark.parametrize(
    ("body", "field_errors"),
    [
        ({}, {"phone_number": ["This field is required."]}),
        ({"phone_number": "12345"}, {"phone_number": ["Ensure this field has at least 10 characters."]}),
        ({"phone_number": "1" * 33}, {"phone_number": ["Ensure this field has no more than 32 characters."]}),
        ({"phone_number": "not a phone number"}, {"phone_number": [INVALID_PHONE]}),
        ({"phone_number": "+1 (000) 000-0000"}, {"phone_number": [INVALID_PHONE]}),
        ({"phone_number": "+14155550100", "name": "n" * 201}, {"name": [
            "Ensure this field has no more than 200 characters."]}),
        ({"phone_number": "+14155550100", "email": "nope"}, {"email": ["Enter a valid email address."]}),
        ({"phone_number": "+14155550100", "email": "a" * 250 + "@x.io"}, {"email": [
            "Ensure this field has no more than 254 characters."]}),
        ({"phone_number": "+14155550100", "notes": "n" * 5001}, {"notes": [
            "Ensure this field has no more than 5000 characters."]}),
    ],
)
def test_create_validation(api, body, field_errors):
    response = api.post("/v1/contacts", body, format="json")
    assert response.status_code == 400
    assert response.json() == {"error": "Validation failed", "details": {"formErrors": [], "fieldErrors": field_errors}}
    assert not Contact.objects.exists()


@pytest.mark.parametrize("field", ["x", "source", "first_call_id", "phone_digits"])
def test_unknown_and_read_only_fields_are_rejected(api, field):
    response = api.post("/v1/contacts", {"phone_number": "+14155550100", field: "v"}, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "error": "Validation failed",
        "details": {"formErrors": [f"Unrecognized key(s) in object: '{field}'"], "fieldErrors": {}},
    }
    assert not Contact.objects.exists()


def test_get_one(api, contact):
    response = api.get(f"/v1/contacts/{contact.id}")
    assert response.status_code == 200
    assert response.json() == {"data": contact_body(contact)}


def test_patch_changes_only_the_given_fields(api, contact):
    response = api.patch(f"/v1/contacts/{contact.id}", {"name": "Maria L.", "notes": None}, format="json")
    assert response.status_code == 200
    contact.refresh_from_db()
    assert (contact.name, contact.notes, contact.email) == ("Maria L.", None, "Maria@Example.com")
    assert response.json() == {"data": contact_body(contact)}


def test_patch_normalizes_a_new_phone_and_409s_on_a_clash(api, org, contact):
    other = api.post("/v1/contacts", {"phone_number": "+14155550101"}, format="json").json()["data"]
    response = api.patch(f"/v1/contacts/{other['id']}", {"phone_number": "415.555.0100"}, format="json")
    assert response.status_code == 409
    assert response.json() == {"error": "conflict", "details": {"field": "phone_number"}}
    response = api.patch(f"/v1/contacts/{other['id']}", {"phone_number": "415.555.0102"}, format="json")
    assert response.status_code == 200
    assert response.json()["data"]["phone_number"] == "+14155550102"
    assert Contact.objects.get(pk=other["id"]).phone_digits == "14155550102"


@pytest.mark.parametrize("method", ["put", "delete"])
def test_put_and_delete_are_not_allowed(api, contact, method):
    response = getattr(api, method)(f"/v1/contacts/{contact.id}", {"name": "x"}, format="json")
    assert response.status_code == 405
    assert response.json() == {"error": "method_not_allowed"}
    assert Contact.objects.filter(pk=contact.pk).exists()


# --- search -------------------------------------------------------------------------------------------------


@pytest.fixture
def people(org, contact):
    from contacts import services

    return {
        "maria": contact,
        "bob": services.contact_create(org=org, phone_number="+12125550142", name="Bob Stone",
                                       email="bob@stone.io", source="api"),
        "nameless": services.contact_create(org=org, phone_number="+13105550199", email="ceo@MARIAN.dev",
                                            source="inbound_call"),
        "digits": services.contact_create(org=org, phone_number="+16175550000", name="Jo 1985", email="jo1985@x.io",
                                          source="api"),
    }


@pytest.mark.parametrize(
    ("search", "expected"),
    [
        ("maria", ["nameless", "maria"]),  # name (Maria Lopez) and email (ceo@MARIAN.dev), any case
        ("LOPEZ", ["maria"]),
        ("stone.io", ["bob"]),
        ("415", ["maria"]),
        ("(415) 555-01", ["maria"]),
        ("+1 212", ["bob"]),
        ("5550199", ["nameless"]),
        ("555", ["digits", "nameless", "bob", "maria"]),
        ("1985", ["digits"]),  # a phone-like search also matches emails (jo1985@), never names
        ("Jo 1985", ["digits"]),
        ("nobody", []),
        ("", ["digits", "nameless", "bob", "maria"]),
        ("bob2", []),  # letters with digits are not a phone search
        ("%", []),  # LIKE wildcards are matched literally
        ("_", []),
    ],
)
def test_search_by_name_email_and_phone_digits(api, people, other_contact, search, expected):
    response = api.get("/v1/contacts", {"search": search})
    assert response.status_code == 200
    assert [row["id"] for row in response.json()["data"]] == [str(people[name].id) for name in expected]


def test_search_results_paginate(api, people):
    first = api.get("/v1/contacts", {"search": "555", "limit": 3}).json()
    assert first["has_more"] is True
    second = api.get("/v1/contacts", {"search": "555", "limit": 3, "cursor": first["next_cursor"]}).json()
    assert [r["id"] for r in first["data"] + second["data"]] == [
        str(people[n].id) for n in ("digits", "nameless", "bob", "maria")
    ]
    assert second["has_more"] is False and second["next_cursor"] is None


@pytest.mark.parametrize(("query", "field"), [("limit=0", "limit"), ("limit=101", "limit"), ("q=x", "q"),
                                              ("cursor=bad", "cursor"), ("search=" + "s" * 201, "search")])
def test_list_query_validation(api, query, field):
    response = api.get(f"/v1/contacts?{query}")
    assert response.status_code == 400
    assert list(response.json()["details"]["fieldErrors"]) == [field]


def test_list_runs_a_constant_number_of_queries(api, org, django_assert_num_queries):
    Contact.objects.bulk_create(
        [Contact(organization=org, phone_number=f"+1415555{i:04d}", phone_digits=f"1415555{i:04d}", name=f"C{i}",
                 source="api") for i in range(120)]
    )
    api.get("/v1/me")  # the key's first use writes last_used_at once; keep that out of the count
    for limit in (1, 100):
        for query in ("", "&search=c", "&search=555"):
            with django_assert_num_queries(1):  # the page (the key is kept: no lookup)
                response = api.get(f"/v1/contacts?limit={limit}{query}")
            assert response.status_code == 200 and len(response.json()["data"]) == limit


# --- tenancy, scope, ids --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "body"), [("get", None), ("patch", {"name": "hijacked"})])
def test_another_orgs_contact_is_404_and_nothing_changes(api, other_contact, method, body):
    before = snapshot()
    response = getattr(api, method)(f"/v1/contacts/{other_contact.id}", body, format="json")
    assert response.status_code == 404
    assert response.json() == NOT_FOUND
    assert snapshot() == before


def test_another_org_never_sees_this_orgs_contacts(other_api, contact):
    assert other_api.get("/v1/contacts").json()["data"] == []
    assert other_api.get("/v1/contacts", {"search": "maria"}).json()["data"] == []


@pytest.mark.parametrize(("method", "body"), [("get", None), ("patch", {"name": "x"})])
@pytest.mark.parametrize("bad_id", ["not-a-uuid", "42", "00000000-0000-0000-0000-000000000000"])
def test_missing_or_non_uuid_ids_are_404(api, method, body, bad_id):
    response = getattr(api, method)(f"/v1/contacts/{bad_id}", body, format="json")
    assert response.status_code == 404
    assert response.json() == NOT_FOUND


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [("post", "/v1/contacts", {"phone_number": "+14155550199"}), ("patch", "/v1/contacts/{id}", {"name": "x"})],
)
def test_read_key_on_writes_is_403_and_nothing_is_written(read_api, contact, method, path, body):
    before = snapshot()
    response = getattr(read_api, method)(path.format(id=contact.id), body, format="json")
    assert response.status_code == 403
    assert response.json() == {"error": "insufficient_scope", "required": "write"}
    assert snapshot() == before


def test_read_key_may_read(read_api, contact):
    assert read_api.get("/v1/contacts").status_code == 200
    assert read_api.get(f"/v1/contacts/{contact.id}").status_code == 200


def test_no_key_is_401(anon_api, contact):
    for response in (anon_api.get("/v1/contacts"), anon_api.post("/v1/contacts", {"phone_number": "+14155550199"})):
        assert response.status_code == 401
        assert response.json() == {"error": "unauthorized"}
    assert Contact.objects.count() == 1
