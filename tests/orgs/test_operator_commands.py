"""The operator commands (README, Operator commands): create_org, create_api_key, revoke_api_key."""


import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError

from orgs.models import ApiKey, Membership, Organization
from orgs.verification import is_verified
from tests.support.clients import PASSWORD
from tests.support.commands import me, run

User = get_user_model()


@pytest.mark.django_db
def test_create_org_prints_the_id_last_and_makes_an_admin():
    lines = run(
        "create_org", "--name", "Bella Pizza", "--admin-email", "Owner@Bella.example", "--admin-password", "pw-12345678"
    )
    org = Organization.objects.get(pk=lines[-1])
    assert org.name == "Bella Pizza"
    assert (org.default_phone_region, org.call_recording_enabled, org.auto_save_contacts, org.meetings_enabled) == (
        "US", True, True, False
    )
    membership = Membership.objects.get(organization=org)
    assert membership.role == "admin" and membership.user.username == "owner@bella.example"
    assert membership.user.check_password("pw-12345678")


@pytest.mark.django_db
def test_create_api_key_prints_a_working_key_once():
    org_id = run("create_org", "--name", "A", "--admin-email", "a@a.example", "--admin-password", "pw-12345678")[-1]
    lines = run("create_api_key", "--org", org_id, "--created-by", "a@a.example", "--name", "CI", "--scopes", "read")
    plaintext = lines[-1]
    response = me(plaintext)
    assert response.status_code == 200
    assert response.json()["data"]["scopes"] == ["read"]
    assert response.json()["data"]["key_name"] == "CI"
    key = ApiKey.objects.get()
    assert plaintext not in str(ApiKey.objects.values().get())
    assert key.created_by.username == "a@a.example"


@pytest.mark.django_db
def test_create_api_key_refuses_a_creator_who_is_not_an_admin(org, member):
    with pytest.raises(CommandError):
        run("create_api_key", "--org", str(org.id), "--created-by", member.username, "--name", "x", "--scopes", "read")
    with pytest.raises(CommandError):
        run("create_api_key", "--org", str(org.id), "--created-by", "no@x.example", "--name", "x", "--scopes", "read")
    assert ApiKey.objects.count() == 0


@pytest.mark.django_db
def test_create_api_key_refuses_an_unknown_org():
    with pytest.raises(CommandError):
        run("create_api_key", "--org", "not-a-uuid", "--created-by", "a@a.example", "--name", "x", "--scopes", "read")


@pytest.mark.django_db
def test_revoke_api_key_takes_effect_at_once(write_key):
    key, plaintext = write_key
    assert me(plaintext).status_code == 200
    run("revoke_api_key", "--key-id", str(key.id))
    assert me(plaintext).status_code == 401
    key.refresh_from_db()
    assert key.revoked_at is not None and key.revoked_by is not None


# --- create_org says what it did (issue 26, item 6) ------------------------------------------------------------


@pytest.mark.django_db
def test_create_org_says_it_made_a_new_confirmed_account():
    lines = run("create_org", "--name", "New", "--admin-email", "new@x.example", "--admin-password", "pw-12345678")
    user = Membership.objects.get(organization_id=lines[-1]).user
    assert "a new admin account new@x.example" in lines[0] and "counts as confirmed" in lines[0]
    assert is_verified(user)


@pytest.mark.django_db
def test_create_org_refuses_an_existing_account_unless_attached_explicitly(admin):
    with pytest.raises(CommandError, match="--attach-existing"):
        run("create_org", "--name", "Taken", "--admin-email", admin.email.upper(), "--admin-password", "pw-12345678")
    with pytest.raises(CommandError, match="--admin-password cannot be used with --attach-existing"):
        run("create_org", "--name", "Taken", "--admin-email", admin.email, "--admin-password", "pw-12345678",
            "--attach-existing")
    assert not Organization.objects.filter(name="Taken").exists()
    lines = run("create_org", "--name", "Taken", "--admin-email", admin.email, "--attach-existing")
    assert "the existing account" in lines[0] and "its password was not changed" in lines[0]
    assert Membership.objects.get(organization_id=lines[-1]).user == admin
    assert User.objects.get(pk=admin.pk).check_password(PASSWORD)


@pytest.mark.django_db
def test_create_org_refuses_what_it_cannot_do():
    with pytest.raises(CommandError, match="no account has"):
        run("create_org", "--name", "X", "--admin-email", "nobody@x.example", "--attach-existing")
    with pytest.raises(CommandError, match="--admin-password is required"):
        run("create_org", "--name", "X", "--admin-email", "nobody@x.example")
    assert not Organization.objects.exists() and not User.objects.filter(username="nobody@x.example").exists()
