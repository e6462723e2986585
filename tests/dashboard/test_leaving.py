"""Removing and leaving: the removed member's very next request (a page or a form post) is refused; the last admin
can neither leave nor be removed (409 with the reason); a signed-in user creates another organization and switches."""

import pytest

from contacts.models import Contact
from orgs.models import Membership, Organization
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db

URL = "/settings/members/"


def membership(user, org):
    return Membership.objects.get(user=user, organization=org)


def test_an_admin_removes_a_member_whose_next_page_is_refused(admin_client, member_client, member, org):
    assert member_client.get("/contacts/").status_code == 200
    response = admin_client.post(f"/settings/members/{membership(member, org).pk}/remove/", follow=True)
    assert f"{member.email} no longer belongs to" in response.content.decode()
    assert not Membership.objects.filter(user=member, organization=org).exists()
    page = member_client.get("/contacts/")
    assert page.status_code == 403 and "does not belong to any organization" in page.content.decode()


def test_a_removed_members_next_form_post_writes_nothing_even_with_another_org(
    admin_client, member_client, member, org, other_org
):
    MembershipFactory(user=member, organization=other_org, role="admin")
    assert f'data-testid="current-org">{org.name}<' in member_client.get("/").content.decode()
    admin_client.post(f"/settings/members/{membership(member, org).pk}/remove/")
    response = member_client.post("/contacts/new/", {"phone_number": "+14155550177", "name": "Carried over"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert not Contact.objects.filter(name="Carried over").exists()
    home = member_client.get("/", follow=True).content.decode()
    assert "You no longer have access to that organization." in home and other_org.name in home


def test_a_member_leaves(member_client, member, org):
    member_client.post(f"{URL}leave/")
    assert not Membership.objects.filter(user=member, organization=org).exists()
    assert member_client.get("/calls/").status_code == 403


@pytest.mark.parametrize("how", ["leave", "remove"])
def test_the_last_admin_can_neither_leave_nor_be_removed(admin_client, admin, org, how):
    path = f"{URL}leave/" if how == "leave" else f"/settings/members/{membership(admin, org).pk}/remove/"
    response = admin_client.post(path)
    assert response.status_code == 409
    assert "An organization keeps at least one admin: make another member an admin first." in response.content.decode()
    assert membership(admin, org).role == "admin"


def test_an_admin_may_leave_when_another_admin_remains(admin_client, admin, member, org):
    Membership.objects.filter(user=member, organization=org).update(role="admin")
    assert admin_client.post(f"{URL}leave/").status_code == 302
    assert not Membership.objects.filter(user=admin, organization=org).exists()


def test_members_cannot_remove_anyone(member_client, admin, org):
    assert member_client.post(f"/settings/members/{membership(admin, org).pk}/remove/").status_code == 403
    assert Membership.objects.filter(user=admin, organization=org).exists()


def test_another_orgs_membership_is_404(admin_client, outsider, other_org):
    target = membership(outsider, other_org)
    assert admin_client.post(f"/settings/members/{target.pk}/remove/").status_code == 404
    assert Membership.objects.filter(pk=target.pk).exists()


def test_a_user_creates_another_org_and_switches_between_them(admin_client, admin, org):
    response = admin_client.post("/organizations/create/", {"name": "Second Shop"}, follow=True)
    second = Organization.objects.get(name="Second Shop")
    assert membership(admin, second).role == "admin"
    assert 'data-testid="current-org">Second Shop<' in response.content.decode()
    switched = admin_client.post("/org/switch/", {"org": str(org.pk)}, follow=True)
    assert f'data-testid="current-org">{org.name}<' in switched.content.decode()


def test_a_user_without_any_org_can_create_one(member_client, member, org):
    member_client.post(f"{URL}leave/")
    page = member_client.get("/").content.decode()
    assert 'data-testid="create-org"' in page
    member_client.post("/organizations/create/", {"name": "Fresh Start"})
    assert membership(member, Organization.objects.get(name="Fresh Start")).is_admin
    assert member_client.get("/calls/").status_code == 200
