"""Settings → Members: everyone sees the list; admins add people and change roles."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from orgs.models import Membership

from .accounts_support import NEW_PASSWORD, reset_link_path, set_password_through
from .conftest import PASSWORD

pytestmark = pytest.mark.django_db

User = get_user_model()
URL = "/settings/members/"


def role_url(membership):
    return f"/settings/members/{membership.pk}/role/"


def test_members_see_the_list_without_controls(member_client, admin, member):
    page = member_client.get(URL).content.decode()
    assert admin.email in page and member.email in page
    assert "Add a member" not in page and "/role/" not in page


def test_admin_adds_a_member(admin_client, org):
    response = admin_client.post(URL, {"email": "New.Person@Example.com", "role": "member"}, follow=True)
    assert response.redirect_chain == [(URL, 302)]
    membership = Membership.objects.get(organization=org, user__username="new.person@example.com")
    assert membership.role == "member"
    assert "new.person@example.com" in response.content.decode()


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


# --- Invitations: a new person gets a set-password link -------------------------------------------------------


def test_an_added_new_person_is_invited_sets_a_password_and_sees_the_org(admin_client, admin, org, mailoutbox):
    response = admin_client.post(URL, {"email": "New.Person@Example.com", "role": "member"}, follow=True)
    assert "e-mailed them a link" in response.content.decode()
    user = User.objects.get(username="new.person@example.com")
    assert user.has_usable_password()  # random and unknown, so that Django's reset form does not skip them

    assert len(mailoutbox) == 1
    invitation = mailoutbox[0]
    assert invitation.to == ["new.person@example.com"]
    assert org.name in invitation.subject and "\n" not in invitation.subject
    assert admin.email in invitation.body and org.name in invitation.body
    path = reset_link_path(invitation)

    person = Client()
    done = set_password_through(person, path)
    assert done.redirect_chain == [("/password-reset/done/", 302)]
    logged = person.post("/login/", {"username": "new.person@example.com", "password": NEW_PASSWORD}, follow=True)
    assert logged.redirect_chain == [("/", 302)]
    assert org.name in logged.content.decode()
    assert person.get(URL).status_code == 200  # a member of the org: may read its members page

    # The invitation link is single use.
    assert 'data-testid="invalid-reset-link"' in Client().get(path, follow=True).content.decode()


def test_an_invited_person_who_lost_the_e_mail_can_use_forgot_password(admin_client, mailoutbox):
    admin_client.post(URL, {"email": "late@example.com", "role": "member"})
    mailoutbox.clear()
    Client().post("/password-reset/", {"email": "late@example.com"})
    assert [message.to for message in mailoutbox] == [["late@example.com"]]


def test_adding_an_existing_user_sends_no_invitation(admin_client, org, outsider, mailoutbox):
    response = admin_client.post(URL, {"email": outsider.email, "role": "member"}, follow=True)
    assert Membership.objects.filter(organization=org, user=outsider).exists()
    assert mailoutbox == []
    assert "e-mailed" not in response.content.decode()
    assert User.objects.get(pk=outsider.pk).check_password(PASSWORD)  # their password is left alone


def test_a_failed_invitation_send_keeps_the_member_and_says_so(admin_client, org, monkeypatch):
    import smtplib

    def broken(*args, **kwargs):
        raise smtplib.SMTPServerDisconnected("down")

    monkeypatch.setattr("dashboard.accounts.send_mail", broken)
    response = admin_client.post(URL, {"email": "unlucky@example.com", "role": "member"}, follow=True)
    assert Membership.objects.filter(organization=org, user__username="unlucky@example.com").exists()
    assert "could not be sent" in response.content.decode()
