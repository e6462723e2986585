"""/v1/call-fields: list, create, get, PATCH, DELETE; the exact bodies of a clash and of bad input; another
organization's field is 404 and untouched; the list is one query whatever its page size."""

import pytest

from knowledge import services
from knowledge.models import CallField
from tests.support.knowledge import TIMESTAMP, knowledge_version


@pytest.fixture
def location(org):
    return services.location_create(org=org, name="Downtown", address="1 Market St", timezone="UTC",
                                    phone_number="+14155550100")


@pytest.fixture
def other_field(other_org):
    return services.call_field_create(org=other_org, name="party_size", label="Party size", type="number")


def _invalid(response, field_errors, form_errors=()):
    assert response.status_code == 400, response.content
    assert response.json() == {"error": "Validation failed",
                               "details": {"formErrors": list(form_errors), "fieldErrors": field_errors}}


def test_create_shows_the_field_and_bumps_the_knowledge_version(api, org, location):
    before = knowledge_version(org)
    response = api.post("/v1/call-fields", {
        "name": "seating", "label": "Seating", "description": "Inside or on the patio.", "type": "enum",
        "choices": ["inside", "patio"], "required": True, "location_ids": [str(location.pk)]}, format="json")
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert TIMESTAMP.match(data.pop("created_at")) and TIMESTAMP.match(data.pop("updated_at"))
    field = CallField.objects.get(organization=org)
    assert data == {"id": str(field.pk), "name": "seating", "label": "Seating",
                    "description": "Inside or on the patio.", "type": "enum",
                    "choices": ["inside", "patio"], "required": True,
                    "location_ids": [str(location.pk)]}
    assert knowledge_version(org) == before + 1
    assert api.get(f"/v1/call-fields/{field.pk}").json()["data"]["location_ids"] == [str(location.pk)]
    listed = api.get("/v1/call-fields").json()["data"]
    assert [(item["name"], item["location_ids"], item["choices"]) for item in listed] == [
        ("seating", [str(location.pk)], ["inside", "patio"])]


def test_defaults_are_every_location_not_required_no_choices(api):
    response = api.post("/v1/call-fields", {"name": "party_size", "label": "Party size", "type": "number"},
                        format="json")
    data = response.json()["data"]
    assert (data["description"], data["choices"], data["required"], data["location_ids"]) == ("", [], False, None)


def test_a_taken_name_is_409_and_writes_nothing(api, org):
    services.call_field_create(org=org, name="party_size", label="Party size", type="number")
    before = knowledge_version(org)
    response = api.post("/v1/call-fields", {"name": "party_size", "label": "Guests", "type": "number"}, format="json")
    assert response.status_code == 409
    assert response.json() == {"error": "conflict", "details": {"field": "name"}}
    assert CallField.objects.filter(organization=org).count() == 1
    assert knowledge_version(org) == before


@pytest.mark.parametrize(("body", "field_errors"), [
    ({"name": "Party Size"}, {"name": ["Use 1 to 64 lowercase letters, digits and underscores, starting with a "
                                       "letter."]}),
    ({"name": "a" * 65}, {"name": ["Ensure this field has no more than 64 characters."]}),
    ({"description": "x" * 1001}, {"description": ["Ensure this field has no more than 1000 characters."]}),
    ({"type": "money"}, {"type": ['"money" is not a valid choice.']}),
    ({"type": "enum"}, {"choices": ["An enum field needs 1 to 50 choices."]}),
    ({"type": "enum", "choices": ["a", "a"]}, {"choices": ["Choices must not repeat."]}),
    ({"type": "enum", "choices": [str(n) for n in range(51)]},
     {"choices": ["Ensure this field has no more than 50 elements."]}),
    ({"type": "number", "choices": ["a"]}, {"choices": ["Only an enum field has choices."]}),
    ({"location_ids": []}, {"location_ids": ["Give a non-empty list of location ids, or null for every location."]}),
    ({"location_ids": ["nope"]}, {"location_ids": ["Item 0: Must be a valid UUID."]}),
    ({"required": "yes"}, {"required": ["Expected a boolean."]}),
])
def test_bad_input_is_400_with_its_field_and_writes_nothing(api, org, body, field_errors):
    response = api.post("/v1/call-fields", {"name": "party_size", "label": "Party size", "type": "number", **body},
                        format="json")
    _invalid(response, field_errors)
    assert not CallField.objects.filter(organization=org).exists()


def test_another_orgs_location_in_location_ids_is_400(api, org, other_org):
    elsewhere = services.location_create(org=other_org, name="Elsewhere", address="a", timezone="UTC",
                                         phone_number="+14155550101")
    response = api.post("/v1/call-fields", {"name": "party_size", "label": "Party size", "type": "number",
                                            "location_ids": [str(elsewhere.pk)]}, format="json")
    _invalid(response, {"location_ids": [f"Not a location of this organization: {elsewhere.pk}."]})


def test_patch_changes_what_it_names_and_checks_the_whole_field(api, org):
    field = services.call_field_create(org=org, name="seating", label="Seating", type="string")
    _invalid(api.patch(f"/v1/call-fields/{field.pk}", {"type": "enum"}, format="json"),
             {"choices": ["An enum field needs 1 to 50 choices."]})
    response = api.patch(f"/v1/call-fields/{field.pk}", {"type": "enum", "choices": ["inside", "patio"],
                                                         "name": "seat"}, format="json")
    assert response.status_code == 200
    assert (response.json()["data"]["name"], response.json()["data"]["choices"]) == ("seat", ["inside", "patio"])


def test_delete_is_204_and_the_field_is_gone(api, org):
    field = services.call_field_create(org=org, name="seating", label="Seating", type="string")
    assert api.delete(f"/v1/call-fields/{field.pk}").status_code == 204
    assert api.get(f"/v1/call-fields/{field.pk}").status_code == 404


def test_another_orgs_field_is_404_everywhere_and_nothing_changes(api, other_field):
    for response in (api.get(f"/v1/call-fields/{other_field.pk}"),
                     api.patch(f"/v1/call-fields/{other_field.pk}", {"label": "Mine"}, format="json"),
                     api.delete(f"/v1/call-fields/{other_field.pk}")):
        assert response.status_code == 404
        assert response.json() == {"error": "not_found"}
    assert CallField.objects.get(pk=other_field.pk).label == "Party size"
    assert api.get("/v1/call-fields").json()["data"] == []


def test_a_read_key_reads_and_may_not_write(read_api, org):
    services.call_field_create(org=org, name="seating", label="Seating", type="string")
    assert read_api.get("/v1/call-fields").status_code == 200
    response = read_api.post("/v1/call-fields", {"name": "x", "label": "X", "type": "string"}, format="json")
    assert response.status_code == 403
    assert CallField.objects.filter(organization=org).count() == 1


def test_the_list_is_one_query_whatever_its_page_size(api, org, django_assert_num_queries):
    CallField.objects.bulk_create([CallField(organization=org, name=f"f{i}", label=f"F{i}", type="string")
                                   for i in range(120)])
    api.get("/v1/me")  # the key's first use writes last_used_at once; keep that out of the count
    for limit in (1, 100):
        with django_assert_num_queries(1):
            response = api.get(f"/v1/call-fields?limit={limit}")
        assert response.status_code == 200 and len(response.json()["data"]) == limit


def test_an_organization_holds_at_most_its_quota_of_call_fields(api, org, other_org, settings):
    settings.QUOTA_CALL_FIELDS_PER_ORG = 2
    for name in ("a", "b"):
        services.call_field_create(org=org, name=name, label=name.upper(), type="string")
    before = knowledge_version(org)
    response = api.post("/v1/call-fields", {"name": "c", "label": "C", "type": "string"}, format="json")
    assert response.status_code == 409
    assert response.json() == {"error": "conflict", "details": {"field": "call_fields"}}
    assert CallField.objects.filter(organization=org).count() == 2
    assert knowledge_version(org) == before
    assert services.call_field_create(org=other_org, name="c", label="C", type="string").name == "c"
    services.call_field_delete(call_field=CallField.objects.get(organization=org, name="a"))
    assert api.post("/v1/call-fields", {"name": "c", "label": "C", "type": "string"},
                    format="json").status_code == 201
