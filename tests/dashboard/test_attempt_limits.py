"""Log in, sign up and password reset are braked per client address: the 11th log-in POST within a
minute (the 6th reset) gets 429 with Retry-After and is not processed."""

import time

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from orgs.models import Organization
from tests.support.clients import PASSWORD


@pytest.fixture(autouse=True)
def _inside_one_window():
    if 60 - time.time() % 60 < 5:
        time.sleep(6)


def test_log_in_attempts_past_the_limit_are_refused_even_with_the_right_password(admin):
    client = Client()
    for _ in range(10):
        assert client.post("/login/", {"username": admin.username, "password": "wrong"}).status_code == 200
    response = client.post("/login/", {"username": admin.username, "password": PASSWORD})
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 60
    assert b"too-many-attempts" in response.content
    assert "_auth_user_id" not in client.session


def test_other_addresses_are_not_braked(admin):
    for _ in range(11):
        Client(REMOTE_ADDR="10.0.0.1").post("/login/", {"username": admin.username, "password": "wrong"})
    response = Client(REMOTE_ADDR="10.0.0.2").post("/login/", {"username": admin.username, "password": PASSWORD})
    assert response.status_code == 302


def test_password_reset_mails_stop_at_the_limit(admin):
    client = Client()
    for _ in range(5):
        assert client.post("/password-reset/", {"email": admin.email}).status_code == 302
    assert client.post("/password-reset/", {"email": admin.email}).status_code == 429
    assert len(mail.outbox) == 5


def test_sign_ups_stop_at_the_limit(db):
    client = Client()
    form = {"password": "a-long-passphrase-1", "organization": "Org"}
    for n in range(10):
        client.post("/signup/", {**form, "email": f"a{n}@x.example"})
    before = (Organization.objects.count(), get_user_model().objects.count())
    response = client.post("/signup/", {**form, "email": "late@x.example"})
    assert response.status_code == 429
    assert (Organization.objects.count(), get_user_model().objects.count()) == before
