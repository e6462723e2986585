"""Who sees which page: the org mixin's rules, for every page, as an admin, a member, another org's admin
and an anonymous visitor."""

import uuid
from urllib.parse import urlencode

import pytest

from orgs.models import ApiKey, Membership

pytestmark = pytest.mark.django_db

# Pages every member of an org may read.
READ_PAGES = ["/", "/settings/", "/settings/api-keys/", "/settings/members/"]


@pytest.mark.parametrize("path", READ_PAGES + ["/settings/api-keys/new/"])
def test_anonymous_visitors_are_sent_to_log_in(client, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"] == f"/login/?next={path}"


@pytest.mark.parametrize("path", READ_PAGES)
def test_admins_and_members_read_every_settings_page(admin_client, member_client, org, path):
    for client in (admin_client, member_client):
        response = client.get(path)
        assert response.status_code == 200
        assert org.name in response.content.decode()


def test_admin_only_pages_are_403_for_members(member_client, write_key):
    key, _ = write_key
    for path in ["/settings/api-keys/new/", f"/settings/api-keys/{key.pk}/revoke/"]:
        response = member_client.get(path)
        assert response.status_code == 403
        assert "dashboard/errors/403.html" in [t.name for t in response.templates]


def test_admin_only_pages_open_for_admins(admin_client, write_key):
    key, _ = write_key
    assert admin_client.get("/settings/api-keys/new/").status_code == 200
    assert admin_client.get(f"/settings/api-keys/{key.pk}/revoke/").status_code == 200


def test_another_orgs_key_is_the_same_404_as_a_missing_one(outsider_client, write_key):
    key, _ = write_key
    hidden = outsider_client.get(f"/settings/api-keys/{key.pk}/revoke/")
    missing = outsider_client.get(f"/settings/api-keys/{uuid.uuid4()}/revoke/")
    assert hidden.status_code == missing.status_code == 404
    assert [t.name for t in hidden.templates] == [t.name for t in missing.templates]
    assert key.name not in hidden.content.decode()


def test_another_orgs_admin_sees_only_their_own_org(outsider_client, org, admin, write_key):
    key, _ = write_key
    keys_page = outsider_client.get("/settings/api-keys/").content.decode()
    members_page = outsider_client.get("/settings/members/").content.decode()
    home = outsider_client.get("/").content.decode()
    assert key.name not in keys_page and key.key_prefix not in keys_page
    assert admin.email not in members_page
    assert org.name not in home


def test_another_orgs_membership_is_404_and_unchanged(outsider_client, member):
    membership = Membership.objects.get(user=member)
    response = outsider_client.post(f"/settings/members/{membership.pk}/role/", {"role": "admin"})
    assert response.status_code == 404
    membership.refresh_from_db()
    assert membership.role == "member"


def test_a_user_without_an_organization_sees_an_explanation(db):
    from tests.factories import UserFactory
    from tests.support.clients import logged_in

    client = logged_in(UserFactory())
    response = client.get("/settings/api-keys/")
    assert response.status_code == 403
    assert "does not belong to any organization" in response.content.decode()


def test_the_current_org_comes_from_the_session_and_switches_only_to_own_orgs(admin, org, other_org, outsider):
    from tests.factories import MembershipFactory
    from tests.support.clients import logged_in

    third = MembershipFactory(user=admin, role="member").organization
    client = logged_in(admin)
    assert org.name in client.get("/").content.decode()
    response = client.post("/org/switch/", {"org": str(third.pk)})
    assert response.status_code == 302
    page = client.get("/settings/").content.decode()
    assert third.name in page and "Only an admin can change these settings." in page
    # Not a member of other_org: the switch is a 404 and the current org stays.
    assert client.post("/org/switch/", {"org": str(other_org.pk)}).status_code == 404
    assert client.post("/org/switch/", {"org": "not-a-uuid"}).status_code == 404
    assert third.name in client.get("/").content.decode()
    assert ApiKey.objects.count() == 0


# Pages members read but only admins change (`admin_methods = ("POST",)`), with a write each would accept.
MEMBER_READ_ADMIN_WRITE = {
    "/settings/": {"name": "Renamed by a member", "default_phone_region": "US"},
    "/settings/members/": {"email": "new.person@example.com", "role": "admin"},
    "/settings/notifications/": {"email": "ops@example.com"},
}


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE", "PROPFIND"])
@pytest.mark.parametrize("path", list(MEMBER_READ_ADMIN_WRITE))
def test_every_unsafe_method_is_a_write_and_refused_to_members(member_client, org, path, method):
    members = list(Membership.objects.values_list("pk", "role"))
    response = member_client.generic(method, path, urlencode(MEMBER_READ_ADMIN_WRITE[path]),
                                     content_type="application/x-www-form-urlencoded")
    assert response.status_code == 403
    assert "dashboard/errors/403.html" in [t.name for t in response.templates]
    org.refresh_from_db()
    assert org.name == "Acme Pizza" and list(Membership.objects.values_list("pk", "role")) == members
