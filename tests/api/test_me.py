def test_me_returns_the_keys_identity(api, write_key, org):
    key, plaintext = write_key
    response = api.get("/v1/me")
    assert response.status_code == 200
    assert response.json() == {
        "data": {
            "org_id": str(org.id),
            "org_name": "Acme Pizza",
            "time_zone": "UTC",
            "key_id": str(key.id),
            "key_name": "Write key",
            "key_prefix": plaintext[:12],
            "scopes": ["read", "write"],
            "location_ids": None,
        }
    }
    assert response["X-Request-Id"]
    assert response["RateLimit-Limit"] == "600"
