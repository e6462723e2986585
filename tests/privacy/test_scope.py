"""The `privacy` scope: `create_api_key --scopes read,privacy` and its combinations with write and audit, as
`GET /v1/me` shows them."""

import pytest

from orgs.models import ApiKey
from tests.support.commands import me, run

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("scopes", "expected"), [
    ("read,privacy", ["read", "privacy"]),
    ("read,write,privacy", ["read", "write", "privacy"]),
    ("read,audit,privacy", ["read", "audit", "privacy"]),
    ("read,write,audit,privacy", ["read", "write", "audit", "privacy"]),
])
def test_create_api_key_accepts_the_privacy_scopes(scopes, expected):
    org_id = run("create_org", "--name", "A", "--admin-email", "a@a.example", "--admin-password", "pw-12345678")[-1]
    plaintext = run("create_api_key", "--org", org_id, "--created-by", "a@a.example", "--name", "DPO",
                    "--scopes", scopes)[-1]
    assert me(plaintext).json()["data"]["scopes"] == expected
    assert (me(plaintext).status_code, "privacy" in expected) == (200, True)


def test_the_dashboard_key_form_offers_the_privacy_scopes(admin_client, org):
    page = admin_client.get("/settings/api-keys/new/").content.decode()
    for value in ("read_privacy", "read_write_privacy", "read_audit_privacy", "read_write_audit_privacy"):
        assert f'value="{value}"' in page
    response = admin_client.post("/settings/api-keys/new/", {"name": "DPO", "scope": "read_write_privacy"})
    assert response.status_code == 302
    assert ApiKey.objects.get(organization=org, name="DPO").scopes == ["read", "write", "privacy"]
