"""Sign up, log in, log out, password reset."""

import re

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from orgs.models import Membership, Organization
from orgs.verification import is_verified
from tests.support.accounts import (
    NEW_PASSWORD,
    confirm_through,
    confirmation_code,
    reset_link_path,
    send_account_mail,
    set_password_through,
)
from tests.support.clients import PASSWORD

pytestmark = pytest.mark.django_db
User = get_user_model()

SIGNUP = {"email": "Owner@Example.com", "password": "a-long-unusual-passphrase", "organization_name": "Bella Napoli"}


def test_sign_up_creates_the_org_and_an_unconfirmed_admin_the_link_logs_in(client, mailoutbox):
    """Sign-up no longer logs in (issue 26 item 6: it must answer the same for a registered address): the confirmation
    link does, after which the admin sees the organization."""
    response = client.post("/signup/", SIGNUP)
    assert (response.status_code, response["Location"]) == (302, "/signup/sent/")
    assert "_auth_user_id" not in client.session
    org = Organization.objects.get(name="Bella Napoli")
    user = User.objects.get(username="owner@example.com")
    assert Membership.objects.get(organization=org, user=user).role == "admin"
    assert user.check_password(SIGNUP["password"])
    assert org.call_recording_enabled and org.auto_save_contacts and not org.meetings_enabled
    assert org.default_phone_region == "US"
    assert not is_verified(user)
    assert len(mailoutbox) == 1 and mailoutbox[0].to == ["owner@example.com"]
    response = confirm_through(client, confirmation_code(mailoutbox[0]))  # the confirmer chooses the password
    assert response.redirect_chain == [("/", 302)]
    assert "Bella Napoli" in response.content.decode()
    assert is_verified(user)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"email": "not-an-email"}, "email"),
        ({"email": ""}, "email"),
        ({"password": "short"}, "password"),
        ({"password": "password123"}, "password"),
        ({"organization_name": ""}, "organization_name"),
        ({"organization_name": "x" * 201}, "organization_name"),
    ],
)
def test_sign_up_rejects_bad_input_inline_and_writes_nothing(client, changes, field):
    response = client.post("/signup/", {**SIGNUP, **changes})
    assert response.status_code == 200
    assert f'data-testid="error-{field}"' in response.content.decode()
    assert Organization.objects.count() == 0 and User.objects.count() == 0
    assert "_auth_user_id" not in client.session


def test_sign_up_with_a_taken_email_changes_nothing_and_mails_the_owner(client, admin, mailoutbox):
    response = client.post("/signup/", {**SIGNUP, "email": admin.email.upper()})
    assert (response.status_code, response["Location"]) == (302, "/signup/sent/")
    assert Organization.objects.count() == 1
    assert not User.objects.get(pk=admin.pk).check_password(SIGNUP["password"])
    assert "_auth_user_id" not in client.session
    assert len(mailoutbox) == 1 and mailoutbox[0].to == [admin.email]
    assert "already has an account" in mailoutbox[0].body


def test_log_in_with_email_any_case(client, admin, org):
    response = client.post("/login/", {"username": admin.email.upper(), "password": PASSWORD}, follow=True)
    assert response.redirect_chain == [("/", 302)]
    assert org.name in response.content.decode()


def test_log_in_with_a_wrong_password_shows_an_error(client, admin):
    response = client.post("/login/", {"username": admin.email, "password": "wrong"})
    assert response.status_code == 200
    assert 'data-testid="form-errors"' in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_log_in_follows_next_only_within_the_site(client, admin):
    ok = client.post("/login/?next=/settings/members/", {"username": admin.email, "password": PASSWORD})
    assert ok["Location"] == "/settings/members/"
    client.post("/logout/")
    evil = client.post("/login/?next=https://evil.example/", {"username": admin.email, "password": PASSWORD})
    assert evil["Location"] == "/"


def test_log_out_is_post_only(admin_client):
    assert admin_client.get("/logout/").status_code == 405
    assert admin_client.get("/").status_code == 200
    response = admin_client.post("/logout/")
    assert response.status_code == 302 and response["Location"] == "/login/"
    assert admin_client.get("/").status_code == 302


def test_pages_for_anonymous_visitors_render(client):
    for path in ("/login/", "/signup/", "/verify-email/"):
        response = client.get(path)
        assert response.status_code == 200
        assert 'name="csrfmiddlewaretoken"' in response.content.decode()
        assert "<label" in response.content.decode()


# --- Sign-up never hands over an existing account -------------------------------------------------------------


def test_a_user_created_between_the_check_and_the_save_is_not_logged_in_as(client, monkeypatch):
    """The race: the account with that email commits between the form and the insert. Sign-up creates no
    organization and never logs the visitor in as that account; it answers as for any address."""
    from dashboard.pages.auth import SignupForm

    check = SignupForm.clean_email
    taken = {}

    def check_then_someone_signs_up(form):
        email = check(form)  # the check passes: nobody has this email yet
        taken["user"] = User.objects.create_user(username=email, email=email, password="the-owner's-own-secret")
        return email

    monkeypatch.setattr(SignupForm, "clean_email", check_then_someone_signs_up)
    response = client.post("/signup/", SIGNUP)

    assert (response.status_code, response["Location"]) == (302, "/signup/sent/")  # as for any address
    assert "_auth_user_id" not in client.session
    assert not Organization.objects.exists() and not Membership.objects.exists()
    owner = User.objects.get(pk=taken["user"].pk)
    assert owner.check_password("the-owner's-own-secret") and not owner.check_password(SIGNUP["password"])
    assert client.get("/").status_code == 302  # still anonymous


def test_organization_signup_refuses_a_taken_email_and_writes_nothing(admin):
    from core.errors import Conflict
    from orgs.services import organization_signup

    before = (Organization.objects.count(), Membership.objects.count(), User.objects.count())
    with pytest.raises(Conflict) as exc:
        organization_signup(name="Hijack", email=admin.email.upper(), password="a-long-unusual-passphrase")
    assert exc.value.field == "email"
    assert (Organization.objects.count(), Membership.objects.count(), User.objects.count()) == before
    assert User.objects.get(pk=admin.pk).check_password(PASSWORD)


# --- Password reset (Django's views, dashboard templates) -----------------------------------------------------

def test_the_login_page_links_to_password_reset(client):
    page = client.get("/login/").content.decode()
    assert 'href="/password-reset/"' in page and "Forgot your password?" in page


def test_password_reset_mails_a_link_that_sets_a_new_password(client, admin, org, mailoutbox):
    response = client.post("/password-reset/", {"email": admin.email.upper()})
    assert response.status_code == 302 and response["Location"] == "/password-reset/sent/"
    assert not mailoutbox  # the request only queues it: the e-mail worker sends it (issue 35)
    assert send_account_mail() == ["sent"]
    assert len(mailoutbox) == 1 and mailoutbox[0].to == [admin.email]
    path = reset_link_path(mailoutbox[0])
    assert mailoutbox[0].body.count(settings.DASHBOARD_URL + path) == 1  # never the request's Host

    done = set_password_through(client, path)
    assert done.redirect_chain == [("/password-reset/done/", 302)]
    assert 'data-testid="password-reset-complete"' in done.content.decode()
    assert "_auth_user_id" not in client.session  # setting a password does not log in by itself

    logged = client.post("/login/", {"username": admin.email, "password": NEW_PASSWORD}, follow=True)
    assert logged.redirect_chain == [("/", 302)] and org.name in logged.content.decode()
    # The link is spent.
    again = Client().get(path, follow=True)
    assert 'data-testid="invalid-reset-link"' in again.content.decode()


def test_password_reset_for_an_unknown_email_reveals_nothing(client, admin, mailoutbox):
    unknown = client.post("/password-reset/", {"email": "nobody@example.com"}, follow=True)
    known = Client().post("/password-reset/", {"email": admin.email}, follow=True)
    assert unknown.redirect_chain == known.redirect_chain == [("/password-reset/sent/", 302)]
    strip_csrf = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')
    assert strip_csrf.sub("", unknown.content.decode()) == strip_csrf.sub("", known.content.decode())
    assert send_account_mail() == ["dropped", "sent"]  # the worker, not the request, finds there is no account
    assert [message.to for message in mailoutbox] == [[admin.email]]


def test_password_reset_pages_render_in_the_auth_layout(client):
    for path in ("/password-reset/", "/password-reset/sent/", "/password-reset/done/"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert 'class="auth-card"' in response.content.decode(), path
    bad = client.get("/password-reset/MQ/not-a-token/")
    assert bad.status_code == 200 and 'data-testid="invalid-reset-link"' in bad.content.decode()
