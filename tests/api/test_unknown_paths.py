"""A /v1 path no route matches is authenticated first: without a valid key 401 (it tells nothing), with one 404
`not_found` carrying the RateLimit headers of every keyed response, whatever the method and the key's scope."""

import pytest

PATHS = ["/v1", "/v1/", "/v1/nope", "/v1/calls/abc/nope", "/v1/contacts/", "/v1/v2/me", "/v1/escalation-rules-x"]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("method", ["get", "post", "put", "patch", "delete", "options"])
def test_without_a_key_an_unknown_path_is_401(anon_api, path, method):
    response = getattr(anon_api, method)(path)
    assert response.status_code == 401
    assert response.json() == {"error": "unauthorized"}
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("method", ["get", "post", "delete"])
def test_with_a_key_an_unknown_path_is_404_with_rate_limit_headers(read_api, path, method):
    response = getattr(read_api, method)(path)
    assert response.status_code == 404
    assert response.json() == {"error": "not_found"}
    limit = "600" if method == "get" else "120"  # counted as the read or write it claims to be
    assert response["RateLimit-Limit"] == limit
    # A read key's write is not counted, as its 403 elsewhere is not: the count is of requests the key may make.
    assert int(response["RateLimit-Remaining"]) == int(limit) - (method == "get")


def test_a_revoked_or_wrong_key_on_an_unknown_path_is_401(db, anon_api):
    anon_api.credentials(HTTP_AUTHORIZATION="Bearer vak_live_not_a_real_key")
    response = anon_api.get("/v1/nope")
    assert response.status_code == 401
    assert response.json() == {"error": "unauthorized"}


def test_outside_v1_unknown_paths_are_unchanged(anon_api):
    assert anon_api.get("/internal/agent/v1/nope").status_code == 404
