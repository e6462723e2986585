"""Settings → Members: everyone sees the list; admins invite people (tests/dashboard/test_invitations.py) and change
roles."""

import pytest
from django.contrib.auth import get_user_model

from orgs.models import Membership

pytestmark = pytest.mark.django_db

User = get_user_model()
URL = "/settings/members/"


def role_url(membership):
    return f"/settings/members/{membership.pk}/role/"


def test_members_see_the_list_without_controls(member_client, admin, member):
    page = member_client.get(URL).content.decode()
    assert admin.email in page and member.email in page
    assert "Invite someone" not in page and "/role/" not in page and "/remove/" not in page


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"email": "not-an-email", "role": "member"}, "email", "Enter a valid email address."),
        ({"email": "", "role": "member"}, "email", "This field is required."),
        ({"email": "a@example.com", "role": "owner"}, "role", "Select a valid choice."),
    ],
)
def test_add_rejects_bad_input_inline_and_writes_nothing(admin_client, org, data, field, message):
    before = Membership.objects.count()
    response = admin_client.post(URL, data)
    assert response.status_code == 200
    page = response.content.decode()
    assert f'data-testid="error-{field}"' in page and message in page
    assert Membership.objects.count() == before


def test_adding_an_existing_member_is_an_inline_error(admin_client, member):
    before = Membership.objects.count()
    response = admin_client.post(URL, {"email": member.email.upper(), "role": "admin"})
    assert response.status_code == 200
    assert "already a member" in response.content.decode()
    assert Membership.objects.count() == before
    assert Membership.objects.get(user=member).role == "member"


def test_a_member_posting_add_gets_403_and_nothing_is_written(member_client):
    before = Membership.objects.count()
    assert member_client.post(URL, {"email": "sneaky@example.com", "role": "admin"}).status_code == 403
    assert Membership.objects.count() == before


def test_admin_changes_a_role(admin_client, member):
    membership = Membership.objects.get(user=member)
    response = admin_client.post(role_url(membership), {"role": "admin"})
    assert response.status_code == 302
    membership.refresh_from_db()
    assert membership.role == "admin"


def test_the_last_admin_cannot_step_down(admin_client, admin):
    membership = Membership.objects.get(user=admin)
    response = admin_client.post(role_url(membership), {"role": "member"})
    assert response.status_code == 200
    assert 'data-testid="role-errors"' in response.content.decode()
    assert "at least one admin" in response.content.decode()
    membership.refresh_from_db()
    assert membership.role == "admin"


def test_a_bad_role_is_refused(admin_client, member):
    membership = Membership.objects.get(user=member)
    response = admin_client.post(role_url(membership), {"role": "owner"})
    assert 'data-testid="role-errors"' in response.content.decode()
    membership.refresh_from_db()
    assert membership.role == "member"


def test_a_member_posting_a_role_change_gets_403(member_client, member):
    membership = Membership.objects.get(user=member)
    assert member_client.post(role_url(membership), {"role": "admin"}).status_code == 403
    membership.refresh_from_db()
    assert membership.role == "member"


def test_role_change_is_post_only(admin_client, member):
    assert admin_client.get(role_url(Membership.objects.get(user=member))).status_code == 405
