"""QUOTA_API_KEYS_PER_ORG (issue 24 item 5): active keys per organization; revoked ones do not count. The service,
the dashboard and `manage.py create_api_key` all refuse past it, and concurrent creations cannot pass it."""


import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from core.errors import Conflict
from orgs.models import ApiKey
from orgs.services import api_key_create, api_key_revoke
from tests.factories import make_key
from tests.support.clients import logged_in
from tests.support.races import run_together

FULL = ("This organization has 2 active API keys, the most it may have (QUOTA_API_KEYS_PER_ORG = 2). "
        "Revoke a key to create another.")


def create(org, admin, name="k"):
    return api_key_create(org=org, created_by=admin, name=name, scope="read")


def test_the_quota_is_409_api_keys_and_a_revoked_key_frees_its_place(org, admin, other_org, settings):
    settings.QUOTA_API_KEYS_PER_ORG = 2
    first, _ = create(org, admin)
    create(org, admin)
    with pytest.raises(Conflict) as refused:
        create(org, admin)
    assert (refused.value.status, refused.value.body(), refused.value.message) == (
        409, {"error": "conflict", "details": {"field": "api_keys"}}, FULL)
    assert ApiKey.objects.filter(organization=org).count() == 2
    make_key(other_org)  # another organization has its own quota
    make_key(other_org)
    api_key_revoke(key=first, revoked_by=admin)
    create(org, admin)  # the revoked key no longer counts
    with pytest.raises(Conflict):
        create(org, admin)


def test_the_quota_defaults_to_50(org, admin):
    for n in range(50):
        create(org, admin, name=f"k{n}")
    with pytest.raises(Conflict):
        create(org, admin)


def test_the_dashboard_says_why_and_creates_nothing(org, admin, settings):
    settings.QUOTA_API_KEYS_PER_ORG = 2
    create(org, admin)
    create(org, admin)
    response = logged_in(admin).post(reverse("dashboard:api-key-create"), {"name": "third", "scope": "read"})
    assert response.status_code == 200
    assert FULL in response.content.decode()
    assert not ApiKey.objects.filter(name="third").exists()


def test_the_command_refuses_clearly(org, admin, settings):
    settings.QUOTA_API_KEYS_PER_ORG = 2
    create(org, admin)
    create(org, admin)
    with pytest.raises(CommandError) as refused:
        call_command("create_api_key", "--org", str(org.id), "--created-by", admin.username, "--name", "x",
                     "--scopes", "read")
    assert FULL in str(refused.value)
    assert ApiKey.objects.filter(organization=org).count() == 2


@pytest.mark.django_db(transaction=True)
def test_concurrent_creations_never_pass_the_quota(org, admin, settings):
    settings.QUOTA_API_KEYS_PER_ORG = 3

    def one(n):
        try:
            create(org, admin, name=f"k{n}")
            return "created"
        except Conflict as exc:
            return exc.field

    outcomes = run_together(*(lambda n=n: one(n) for n in range(6)), timeout=60)
    assert sorted(outcomes) == ["api_keys"] * 3 + ["created"] * 3
    assert ApiKey.objects.filter(organization=org).count() == 3
