"""/v1/facts: list, create, read, PATCH, PUT, DELETE; duplicate label 409; every write bumps knowledge_version."""

import pytest

from core.timefmt import iso_ms
from knowledge.models import Fact
from tests.support.knowledge import TIMESTAMP, knowledge_version


def fact_body(fact: Fact) -> dict:
    return {
        "id": str(fact.id),
        "label": fact.label,
        "content": fact.content,
        "location_id": str(fact.location_id) if fact.location_id else None,
        "created_at": iso_ms(fact.created_at),
        "updated_at": iso_ms(fact.updated_at),
    }


def test_create_returns_201_with_the_fact(api, org, location):
    before = knowledge_version(org)
    response = api.post(
        "/v1/facts", {"label": " Parking ", "content": "Free after 6pm.", "location_id": str(location.id)},
        format="json",
    )
    assert response.status_code == 201
    fact = Fact.objects.get()
    assert fact.organization_id == org.id and fact.label == "Parking" and fact.location_id == location.id
    assert response.json() == {"data": fact_body(fact)}
    assert TIMESTAMP.match(response.json()["data"]["created_at"])
    assert knowledge_version(org) == before + 1


def test_create_without_location_applies_to_the_whole_org(api):
    response = api.post("/v1/facts", {"label": "Hours", "content": "9 to 5"}, format="json")
    assert response.status_code == 201
    assert response.json()["data"]["location_id"] is None


def test_duplicate_label_is_409_and_writes_nothing(api, org, fact):
    before = knowledge_version(org)
    response = api.post("/v1/facts", {"label": "Opening hours", "content": "Different"}, format="json")
    assert response.status_code == 409
    assert response.json() == {"error": "conflict", "details": {"field": "label"}}
    assert Fact.objects.count() == 1
    assert knowledge_version(org) == before


def test_same_label_in_another_org_is_fine(api, other_fact):
    assert api.post("/v1/facts", {"label": other_fact.label, "content": "x"}, format="json").status_code == 201


def test_patch_to_a_taken_label_is_409(api, org, fact):
    second = api.post("/v1/facts", {"label": "Parking", "content": "x"}, format="json").json()["data"]
    response = api.patch(f"/v1/facts/{second['id']}", {"label": "Opening hours"}, format="json")
    assert response.status_code == 409
    assert response.json() == {"error": "conflict", "details": {"field": "label"}}
    assert Fact.objects.get(pk=second["id"]).label == "Parking"


@pytest.mark.parametrize(
    ("body", "field_errors"),
    [
        ({"content": "x"}, {"label": ["This field is required."]}),
        ({"label": "x"}, {"content": ["This field is required."]}),
        ({"label": "", "content": "x"}, {"label": ["This field may not be blank."]}),
        ({"label": "x" * 201, "content": "x"}, {"label": ["Ensure this field has no more than 200 characters."]}),
        ({"label": "x", "content": "y" * 10_001}, {"content": [
            "Ensure this field has no more than 10000 characters."]}),
        ({"label": "x", "content": "y", "location_id": "nope"}, {"location_id": ["Must be a valid UUID."]}),
        ({"label": None, "content": "y"}, {"label": ["This field may not be null."]}),
    ],
)
def test_create_validation(api, org, body, field_errors):
    response = api.post("/v1/facts", body, format="json")
    assert response.status_code == 400
    assert response.json() == {"error": "Validation failed", "details": {"formErrors": [], "fieldErrors": field_errors}}
    assert not Fact.objects.exists()


def test_content_of_exactly_10000_characters_is_accepted(api):
    response = api.post("/v1/facts", {"label": "Menu", "content": "y" * 10_000}, format="json")
    assert response.status_code == 201


def test_unknown_field_is_rejected(api):
    response = api.post("/v1/facts", {"label": "x", "content": "y", "x": 1}, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "error": "Validation failed",
        "details": {"formErrors": ["Unrecognized key(s) in object: 'x'"], "fieldErrors": {}},
    }


def test_read_only_fields_are_unknown_on_input(api, fact):
    response = api.patch(f"/v1/facts/{fact.id}", {"id": "x", "created_at": "y"}, format="json")
    assert response.status_code == 400
    assert response.json()["details"]["formErrors"] == ["Unrecognized key(s) in object: 'id', 'created_at'"]


def test_another_orgs_location_in_the_body_is_404_and_nothing_is_written(api, org, other_location):
    before = knowledge_version(org)
    body = {"label": "x", "content": "y", "location_id": str(other_location.id)}
    response = api.post("/v1/facts", body, format="json")
    assert response.status_code == 404
    assert response.json() == {"error": "not_found"}
    assert not Fact.objects.filter(organization=org).exists()
    assert knowledge_version(org) == before


def test_get_one(api, fact):
    response = api.get(f"/v1/facts/{fact.id}")
    assert response.status_code == 200
    assert response.json() == {"data": fact_body(fact)}


def test_patch_changes_only_the_given_fields(api, org, fact, location):
    before = knowledge_version(org)
    response = api.patch(f"/v1/facts/{fact.id}", {"content": "Now 10am to 11pm."}, format="json")
    assert response.status_code == 200
    fact.refresh_from_db()
    assert fact.label == "Opening hours" and fact.content == "Now 10am to 11pm."
    assert response.json() == {"data": fact_body(fact)}
    assert knowledge_version(org) == before + 1

    response = api.patch(f"/v1/facts/{fact.id}", {"location_id": str(location.id)}, format="json")
    assert response.json()["data"]["location_id"] == str(location.id)
    response = api.patch(f"/v1/facts/{fact.id}", {"location_id": None}, format="json")
    assert response.json()["data"]["location_id"] is None
    assert knowledge_version(org) == before + 3


def test_put_replaces_and_requires_every_required_field(api, org, fact, location):
    fact.location = location
    fact.save()
    response = api.put(f"/v1/facts/{fact.id}", {"content": "only content"}, format="json")
    assert response.status_code == 400
    assert response.json()["details"]["fieldErrors"] == {"label": ["This field is required."]}

    before = knowledge_version(org)
    response = api.put(f"/v1/facts/{fact.id}", {"label": "Hours", "content": "Replaced"}, format="json")
    assert response.status_code == 200
    fact.refresh_from_db()
    assert (fact.label, fact.content, fact.location_id) == ("Hours", "Replaced", None)
    assert response.json() == {"data": fact_body(fact)}
    assert knowledge_version(org) == before + 1


def test_delete_is_204_without_a_body(api, org, fact):
    before = knowledge_version(org)
    response = api.delete(f"/v1/facts/{fact.id}")
    assert response.status_code == 204
    assert response.content == b""
    assert not Fact.objects.exists()
    assert knowledge_version(org) == before + 1
    assert api.get(f"/v1/facts/{fact.id}").status_code == 404


def test_list_is_newest_first_and_paginates(api, org):
    ids = [api.post("/v1/facts", {"label": f"F{i}", "content": "c"}, format="json").json()["data"]["id"]
           for i in range(5)]
    first = api.get("/v1/facts?limit=2").json()
    assert [row["id"] for row in first["data"]] == ids[::-1][:2]
    assert first["has_more"] is True and first["next_cursor"]
    second = api.get(f"/v1/facts?limit=2&cursor={first['next_cursor']}").json()
    third = api.get(f"/v1/facts?limit=2&cursor={second['next_cursor']}").json()
    assert [row["id"] for row in second["data"] + third["data"]] == ids[::-1][2:]
    assert third == {"data": third["data"], "has_more": False, "next_cursor": None}
    assert first["data"][0] == fact_body(Fact.objects.get(pk=ids[-1]))


def test_list_shows_only_the_orgs_facts(api, fact, other_fact):
    assert [row["id"] for row in api.get("/v1/facts").json()["data"]] == [str(fact.id)]


def test_a_cursor_of_another_list_is_refused(api, fact):
    api.post("/v1/facts", {"label": "second", "content": "c"}, format="json")
    cursor = api.get("/v1/facts?limit=1").json()["next_cursor"]
    response = api.get(f"/v1/team-members?cursor={cursor}")
    assert response.status_code == 400
    assert response.json()["details"]["fieldErrors"] == {"cursor": ["Invalid cursor."]}
