"""/v1/team-members: list, create, read, PATCH, DELETE; a platform user's record is 403 `forbidden`."""

import pytest

from core.timefmt import iso_ms
from knowledge.models import TeamMember
from tests.support.knowledge import TIMESTAMP, knowledge_version


def member_body(member: TeamMember) -> dict:
    return {
        "id": str(member.id),
        "name": member.name,
        "email": member.email,
        "phone_number": member.phone_number,
        "role": member.role,
        "is_platform_user": member.user_id is not None,
        "created_at": iso_ms(member.created_at),
        "updated_at": iso_ms(member.updated_at),
    }


def test_create_with_every_field_normalizes_the_phone(api, org):
    before = knowledge_version(org)
    response = api.post(
        "/v1/team-members",
        {"name": "Sam Server", "email": "sam@example.com", "phone_number": "(415) 555-0123", "role": "Host"},
        format="json",
    )
    assert response.status_code == 201
    member = TeamMember.objects.get()
    assert member.phone_number == "+14155550123" and member.user_id is None
    assert response.json() == {"data": member_body(member)}
    assert TIMESTAMP.match(response.json()["data"]["updated_at"])
    assert knowledge_version(org) == before + 1


def test_create_with_only_a_name_gives_nulls(api):
    response = api.post("/v1/team-members", {"name": "Solo"}, format="json")
    assert response.status_code == 201
    data = response.json()["data"]
    assert (data["email"], data["phone_number"], data["role"], data["is_platform_user"]) == (None, None, None, False)


def test_blank_optional_fields_are_stored_as_null(api):
    response = api.post("/v1/team-members", {"name": "Solo", "email": "", "role": "  "}, format="json")
    assert response.status_code == 201
    assert response.json()["data"]["email"] is None and response.json()["data"]["role"] is None


@pytest.mark.parametrize(
    ("body", "field_errors"),
    [
        ({}, {"name": ["This field is required."]}),
        ({"name": "x" * 201}, {"name": ["Ensure this field has no more than 200 characters."]}),
        ({"name": "x", "email": "not-an-email"}, {"email": ["Enter a valid email address."]}),
        ({"name": "x", "phone_number": "12345"}, {"phone_number": [
            "Enter a valid phone number (E.164, or a national number of the organization's region)."]}),
        ({"name": "x", "phone_number": "1" * 33}, {"phone_number": [
            "Ensure this field has no more than 32 characters."]}),
        ({"name": "x", "role": "r" * 201}, {"role": ["Ensure this field has no more than 200 characters."]}),
    ],
)
def test_create_validation(api, body, field_errors):
    response = api.post("/v1/team-members", body, format="json")
    assert response.status_code == 400
    assert response.json() == {"error": "Validation failed", "details": {"formErrors": [], "fieldErrors": field_errors}}
    assert not TeamMember.objects.exists()


@pytest.mark.parametrize("field", ["is_platform_user", "user", "id"])
def test_platform_user_link_cannot_be_set_through_the_api(api, field):
    response = api.post("/v1/team-members", {"name": "x", field: True}, format="json")
    assert response.status_code == 400
    assert response.json()["details"]["formErrors"] == [f"Unrecognized key(s) in object: '{field}'"]
    assert not TeamMember.objects.exists()


def test_get_one(api, team_member, platform_member):
    assert api.get(f"/v1/team-members/{team_member.id}").json() == {"data": member_body(team_member)}
    response = api.get(f"/v1/team-members/{platform_member.id}")
    assert response.status_code == 200
    assert response.json()["data"]["is_platform_user"] is True


def test_patch_changes_only_the_given_fields(api, org, team_member):
    before = knowledge_version(org)
    response = api.patch(f"/v1/team-members/{team_member.id}", {"role": None, "phone_number": "+1 415 555 0199"},
                         format="json")
    assert response.status_code == 200
    team_member.refresh_from_db()
    assert (team_member.name, team_member.role, team_member.phone_number) == ("Dana Cook", None, "+14155550199")
    assert response.json() == {"data": member_body(team_member)}
    assert knowledge_version(org) == before + 1


def test_delete_is_204_without_a_body(api, org, team_member):
    before = knowledge_version(org)
    response = api.delete(f"/v1/team-members/{team_member.id}")
    assert response.status_code == 204 and response.content == b""
    assert not TeamMember.objects.exists()
    assert knowledge_version(org) == before + 1


@pytest.mark.parametrize(("method", "body"), [("patch", {"name": "Renamed"}), ("delete", None)])
def test_a_platform_user_cannot_be_changed_through_the_api(api, org, platform_member, method, body):
    before = knowledge_version(org)
    response = getattr(api, method)(f"/v1/team-members/{platform_member.id}", body, format="json")
    assert response.status_code == 403
    assert response.json() == {"error": "forbidden"}
    platform_member.refresh_from_db()
    assert platform_member.name == "Pat Platform"
    assert knowledge_version(org) == before


def test_put_is_not_allowed(api, team_member):
    response = api.put(f"/v1/team-members/{team_member.id}", {"name": "x"}, format="json")
    assert response.status_code == 405
    assert response.json() == {"error": "method_not_allowed"}


def test_list_is_newest_first_with_platform_flag(api, team_member, platform_member, other_team_member):
    body = api.get("/v1/team-members").json()
    assert body == {
        "data": [member_body(platform_member), member_body(team_member)],
        "has_more": False,
        "next_cursor": None,
    }
