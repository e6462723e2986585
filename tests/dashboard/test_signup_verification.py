"""Sign-up answers the same whether or not an address is registered, and an address is confirmed (a link mailed to
it) before its account can invite anyone (issue 26, item 6)."""

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from devtools.management.commands.seed_demo import DEMO_EMAIL, DEMO_ORG
from notifications.models import EmailNotification
from orgs.invitations import invitation_accept_new_account, invitation_create, token_for
from orgs.models import Invitation, Organization
from orgs.verification import EmailNotVerified, VerificationInvalid, code_for, is_verified, mark_verified, verify
from tests.support.accounts import (
    confirm_through,
    confirmation_code,
    reset_link_path,
    send_account_mail,
    set_password_through,
)
from tests.support.clients import logged_in

pytestmark = pytest.mark.django_db
User = get_user_model()
FORM = {"password": "a-long-unusual-passphrase", "organization_name": "Trattoria"}


def _sign_up(email):
    return Client().post("/signup/", {**FORM, "email": email}, follow=True)


def _page(response) -> str:
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", response.content.decode())


def test_sign_up_answers_the_same_for_a_registered_and_a_new_address(admin, mailoutbox):
    registered = _sign_up(admin.email.upper())
    new = _sign_up("nobody-yet@example.com")
    assert registered.status_code == new.status_code == 200
    assert registered.redirect_chain == new.redirect_chain == [("/signup/sent/", 302)]
    assert _page(registered) == _page(new)
    assert 'data-testid="signup-sent"' in _page(new)
    assert Organization.objects.filter(name="Trattoria").count() == 1  # the new address's only
    assert [message.to for message in mailoutbox] == [[admin.email], ["nobody-yet@example.com"]]


def test_a_second_sign_up_of_an_unconfirmed_address_mails_a_fresh_link(mailoutbox):
    _sign_up("late@example.com")
    user = User.objects.get(username="late@example.com")
    _sign_up("late@example.com")
    assert len(mailoutbox) == 2 and "already has an account" in mailoutbox[1].body
    assert verify(code=confirmation_code(mailoutbox[1])) == user and is_verified(user)
    assert Organization.objects.count() == 1


def test_a_confirmation_code_works_once_and_a_forged_one_never(mailoutbox):
    _sign_up("owner@example.com")
    code = confirmation_code(mailoutbox[0])
    forged = Client().post("/verify-email/", {"code": code[:-2] + ("aa" if not code.endswith("aa") else "bb")})
    assert forged.status_code == 200 and 'data-testid="error-code"' in forged.content.decode()
    assert not is_verified(User.objects.get(username="owner@example.com"))
    assert confirm_through(Client(), code, follow=False).status_code == 302
    visitor = Client()
    again = visitor.post("/verify-email/", {"code": code})
    assert again.status_code == 200 and "not valid" in again.content.decode()
    assert "_auth_user_id" not in visitor.session


def test_the_code_never_travels_in_a_url_path_or_query(mailoutbox):
    _sign_up("owner@example.com")
    code = confirmation_code(mailoutbox[0])  # asserts it is the link's fragment, which browsers never send
    assert mailoutbox[0].body.count(code) == 2  # the link's fragment and the code to type


def test_an_unconfirmed_admin_cannot_invite_and_no_invitation_mail_is_queued(mailoutbox):
    _sign_up("owner@example.com")
    owner = User.objects.get(username="owner@example.com")
    owner_client = Client()
    owner_client.force_login(owner)
    response = owner_client.post("/settings/members/", {"email": "friend@example.com", "role": "member"})
    assert response.status_code == 403
    page = response.content.decode()
    assert "Confirm your e-mail address before inviting members" in page and 'data-testid="confirm-email"' in page
    assert not Invitation.objects.exists() and not EmailNotification.objects.exists()
    with pytest.raises(EmailNotVerified):
        invitation_create(org=Organization.objects.get(), by=owner, email="friend@example.com", role="member")

    # The members page sends a new link; once confirmed, the same invitation goes out.
    assert owner_client.post("/verify-email/send/").status_code == 302
    assert mailoutbox[-1].to == ["owner@example.com"]
    verify(code=confirmation_code(mailoutbox[-1]))
    response = owner_client.post("/settings/members/", {"email": "friend@example.com", "role": "member"})
    assert response.status_code == 302
    assert Invitation.objects.get().email == "friend@example.com"
    assert list(EmailNotification.objects.values_list("to_email", flat=True)) == ["friend@example.com"]


def test_an_unconfirmed_admin_cannot_resend_an_invitation(org, admin):
    invitation = invitation_create(org=org, by=admin, email="friend@example.com", role="member")  # confirmed admin
    admin.email = "changed@example.com"  # a changed address is unconfirmed again
    admin.save(update_fields=["email"])
    response = logged_in(admin).post(f"/settings/invitations/{invitation.pk}/resend/", follow=True)
    assert "Confirm your e-mail address" in response.content.decode()
    assert Invitation.objects.get(pk=invitation.pk).nonce == invitation.nonce  # no new link
    assert not EmailNotification.objects.exists()


def test_resetting_a_password_confirms_the_address(client, mailoutbox):
    user = User.objects.create_user(username="reset@example.com", email="reset@example.com", password="x-y-z-1234567")
    assert not is_verified(user)
    client.post("/password-reset/", {"email": "reset@example.com"})
    send_account_mail()
    set_password_through(Client(), reset_link_path(mailoutbox[-1]))
    assert is_verified(user)


def test_accepting_an_invitation_as_a_new_account_confirms_the_address(org, admin):
    invitation = invitation_create(org=org, by=admin, email="new@example.com", role="member")
    membership = invitation_accept_new_account(invitation_id=invitation.pk, token=token_for(invitation.pk,
                                               invitation.nonce), password="a-long-unusual-passphrase")
    assert is_verified(membership.user)


def test_the_code_is_bound_to_the_account_state():
    user = User.objects.create_user(username="a@example.com", email="a@example.com", password="x-y-z-1234567")
    code = code_for(user)
    mark_verified(user=user)
    with pytest.raises(VerificationInvalid):  # a confirmed address spends every code made before
        verify(code=code)


def test_the_demo_admin_of_seed_demo_is_confirmed_and_can_invite(settings):
    settings.DEBUG = True  # seed_demo's public password is for development only
    call_command("seed_demo", calls=0, stdout=io.StringIO())
    admin = User.objects.get(username=DEMO_EMAIL)
    assert is_verified(admin)
    org = Organization.objects.get(name=DEMO_ORG)
    assert invitation_create(org=org, by=admin, email="guest@demo.example", role="member").pk


def test_a_disabled_account_is_not_confirmed_nor_logged_in_by_its_code(mailoutbox):
    _sign_up("owner@example.com")
    User.objects.filter(username="owner@example.com").update(is_active=False)
    visitor = Client()
    response = visitor.post("/verify-email/", {"code": confirmation_code(mailoutbox[0])})
    assert response.status_code == 200 and 'data-testid="error-code"' in response.content.decode()
    assert "_auth_user_id" not in visitor.session
    assert not is_verified(User.objects.get(username="owner@example.com"))
