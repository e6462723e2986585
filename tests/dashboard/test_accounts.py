"""Sign up, log in, log out."""

import pytest
from django.contrib.auth import get_user_model

from orgs.models import Membership, Organization

from .conftest import PASSWORD

pytestmark = pytest.mark.django_db
User = get_user_model()

SIGNUP = {"email": "Owner@Example.com", "password": "a-long-unusual-passphrase", "organization_name": "Bella Napoli"}


def test_sign_up_creates_the_org_and_its_admin_and_logs_in(client):
    response = client.post("/signup/", SIGNUP, follow=True)
    assert response.redirect_chain == [("/", 302)]
    org = Organization.objects.get(name="Bella Napoli")
    user = User.objects.get(username="owner@example.com")
    assert Membership.objects.get(organization=org, user=user).role == "admin"
    assert user.check_password(SIGNUP["password"])
    assert org.call_recording_enabled and org.auto_save_contacts and not org.meetings_enabled
    assert org.default_phone_region == "US"
    assert "Bella Napoli" in response.content.decode()


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


def test_sign_up_with_a_taken_email_is_refused(client, admin):
    response = client.post("/signup/", {**SIGNUP, "email": admin.email.upper()})
    assert "already exists" in response.content.decode()
    assert Organization.objects.count() == 1
    assert not User.objects.get(pk=admin.pk).check_password(SIGNUP["password"])


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
    for path in ("/login/", "/signup/"):
        response = client.get(path)
        assert response.status_code == 200
        assert 'name="csrfmiddlewaretoken"' in response.content.decode()
        assert "<label" in response.content.decode()
