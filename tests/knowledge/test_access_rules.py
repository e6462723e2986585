"""Tenancy, scope and id rules for every locations/facts/team-members endpoint, and constant queries per list."""

import pytest

from knowledge import services
from knowledge.models import Fact, TeamMember
from orgs.models import Location
from tests.support.knowledge import knowledge_version

NOT_FOUND = {"error": "not_found"}

DETAIL_ENDPOINTS = [
    # (path prefix, fixture of a row of other_org, methods with a body)
    ("/v1/locations", "other_location", [("get", None)]),
    ("/v1/facts", "other_fact", [("get", None), ("patch", {"content": "hijacked"}),
                                 ("put", {"label": "hijacked", "content": "hijacked"}), ("delete", None)]),
    ("/v1/team-members", "other_team_member", [("get", None), ("patch", {"name": "hijacked"}), ("delete", None)]),
]
MATRIX = [(prefix, fixture, method, body) for prefix, fixture, methods in DETAIL_ENDPOINTS for method, body in methods]


def snapshot():
    return (
        sorted(Location.objects.values_list("id", "name", "updated_at")),
        sorted(Fact.objects.values_list("id", "label", "content", "location_id", "updated_at")),
        sorted(TeamMember.objects.values_list("id", "name", "email", "updated_at")),
    )


@pytest.mark.parametrize(("prefix", "fixture", "method", "body"), MATRIX)
def test_another_orgs_id_is_404_and_nothing_changes(request, api, org, other_org, prefix, fixture, method, body):
    row = request.getfixturevalue(fixture)
    before, versions = snapshot(), (knowledge_version(org), knowledge_version(other_org))
    response = getattr(api, method)(f"{prefix}/{row.id}", body, format="json")
    assert response.status_code == 404
    assert response.json() == NOT_FOUND
    assert snapshot() == before
    assert (knowledge_version(org), knowledge_version(other_org)) == versions


@pytest.mark.parametrize(("prefix", "fixture", "method", "body"), MATRIX)
@pytest.mark.parametrize("bad_id", ["not-a-uuid", "123", "00000000-0000-0000-0000-000000000000", "%20"])
def test_missing_or_non_uuid_ids_are_404(request, api, prefix, fixture, method, body, bad_id):
    response = getattr(api, method)(f"{prefix}/{bad_id}", body, format="json")
    assert response.status_code == 404
    assert response.json() == NOT_FOUND


WRITES = [
    ("post", "/v1/facts", {"label": "New", "content": "c"}),
    ("patch", "/v1/facts/{fact}", {"content": "changed"}),
    ("put", "/v1/facts/{fact}", {"label": "changed", "content": "changed"}),
    ("delete", "/v1/facts/{fact}", None),
    ("post", "/v1/team-members", {"name": "New"}),
    ("patch", "/v1/team-members/{team_member}", {"name": "changed"}),
    ("delete", "/v1/team-members/{team_member}", None),
]


@pytest.mark.parametrize(("method", "path", "body"), WRITES)
def test_read_key_on_writes_is_403_and_nothing_is_written(read_api, org, fact, team_member, method, path, body):
    before, version = snapshot(), knowledge_version(org)
    response = getattr(read_api, method)(path.format(fact=fact.id, team_member=team_member.id), body, format="json")
    assert response.status_code == 403
    assert response.json() == {"error": "insufficient_scope", "required": "write"}
    assert snapshot() == before
    assert knowledge_version(org) == version


@pytest.mark.parametrize(("method", "path", "body"), WRITES)
def test_writes_without_a_key_are_401_and_nothing_is_written(anon_api, org, fact, team_member, method, path, body):
    before = snapshot()
    response = getattr(anon_api, method)(path.format(fact=fact.id, team_member=team_member.id), body, format="json")
    assert response.status_code == 401
    assert response.json() == {"error": "unauthorized"}
    assert snapshot() == before


@pytest.mark.parametrize("path", ["/v1/locations", "/v1/facts", "/v1/team-members"])
def test_read_key_may_list(read_api, path):
    assert read_api.get(path).status_code == 200


@pytest.mark.parametrize("path", ["/v1/locations", "/v1/facts", "/v1/team-members"])
@pytest.mark.parametrize(("query", "field"), [("limit=0", "limit"), ("limit=101", "limit"), ("search=x", "search"),
                                              ("cursor=garbage", "cursor")])
def test_list_query_validation(api, path, query, field):
    response = api.get(f"{path}?{query}")
    assert response.status_code == 400
    assert list(response.json()["details"]["fieldErrors"]) == [field]


def _many(org, count):
    location = services.location_create(org=org, name="Main", address="a", timezone="UTC", phone_number="+14155550100")
    Location.objects.bulk_create(
        [Location(organization=org, name=f"L{i}", address="a", timezone="UTC", phone_number="+14155550100")
         for i in range(count)]
    )
    Fact.objects.bulk_create(
        [Fact(organization=org, label=f"F{i}", content="c", location=location) for i in range(count)]
    )
    TeamMember.objects.bulk_create([TeamMember(organization=org, name=f"T{i}") for i in range(count)])


@pytest.mark.parametrize("path", ["/v1/locations", "/v1/facts", "/v1/team-members"])
def test_each_list_runs_a_constant_number_of_queries(api, org, platform_member, path, django_assert_num_queries):
    _many(org, 120)
    api.get("/v1/me")  # the key's first use writes last_used_at once; keep that out of the count
    counts = {}
    for limit in (1, 100):
        with django_assert_num_queries(1) as captured:  # the page (the key is kept: no lookup)
            response = api.get(f"{path}?limit={limit}")
        assert response.status_code == 200 and len(response.json()["data"]) == limit
        counts[limit] = len(captured)
    assert counts[1] == counts[100]
