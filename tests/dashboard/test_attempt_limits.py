"""Log in, sign up and password reset are braked per client address: the 11th log-in POST within a
minute (the 6th reset) gets 429 with Retry-After and is not processed."""

import uuid

from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from dashboard.attempts import AccountBrake
from orgs.models import Organization
from tests.support.accounts import NEW_PASSWORD, reset_link_path, send_account_mail, set_password_through
from tests.support.clients import PASSWORD


def test_log_in_attempts_past_the_limit_are_refused_even_with_the_right_password(admin):
    client = Client()
    for n in range(10):  # ten accounts, so that only the per-address brake is at play
        assert client.post("/login/", {"username": f"guess{n}@example.com", "password": "wrong"}).status_code == 200
    response = client.post("/login/", {"username": admin.username, "password": PASSWORD})
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 60
    assert b"too-many-attempts" in response.content
    assert "_auth_user_id" not in client.session


def test_the_address_brakes_minute_opens_at_its_first_post(db):
    """Not the clock's minute: whenever the burst starts, the wait after it is (nearly) the whole minute, so a burst
    at a minute's end cannot go on at the next minute's start."""
    client = Client(REMOTE_ADDR="10.0.7.1")
    for n in range(10):  # ten accounts, so that only the per-address brake is at play
        assert client.post("/login/", {"username": f"burst{n}@example.com", "password": "wrong"}).status_code == 200
    response = client.post("/login/", {"username": "burst10@example.com", "password": "wrong"})
    assert response.status_code == 429
    assert 55 <= int(response["Retry-After"]) <= 60


def test_other_addresses_are_not_braked(admin):
    for _ in range(11):  # another account, so that only the per-address brake is at play
        Client(REMOTE_ADDR="10.0.0.1").post("/login/", {"username": "someone@else.example", "password": "wrong"})
    response = Client(REMOTE_ADDR="10.0.0.2").post("/login/", {"username": admin.username, "password": PASSWORD})
    assert response.status_code == 302


def test_password_reset_mails_stop_at_the_limit(admin):
    client = Client()
    for _ in range(5):
        assert client.post("/password-reset/", {"email": admin.email}).status_code == 302
    assert client.post("/password-reset/", {"email": admin.email}).status_code == 429
    assert send_account_mail() == ["sent"] * 5
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


# --- Behind a proxy, and per account ----------------------------------------------------------------------------


def _through_proxy(client_ip, proxy="10.9.9.9"):
    return Client(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=client_ip)


def _wrong(client, username=None):
    """A failed log-in; of a fresh account unless told, so that only the per-address brake is at play."""
    username = username or f"{uuid.uuid4().hex}@example.com"
    return client.post("/login/", {"username": username, "password": "wrong"}).status_code


def test_behind_a_configured_proxy_two_clients_are_counted_apart(db, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    assert [_wrong(_through_proxy("203.0.113.1")) for _ in range(11)][-1] == 429
    assert _wrong(_through_proxy("203.0.113.2")) == 200


def test_a_list_of_trusted_proxies_works_too_and_skips_every_trusted_hop(db, settings):
    settings.TRUSTED_PROXIES = ["10.9.0.0/16", "192.0.2.7"]
    chain = "203.0.113.5, 192.0.2.7"  # the client, then a second trusted proxy
    assert [_wrong(Client(REMOTE_ADDR="10.9.1.1", HTTP_X_FORWARDED_FOR=chain)) for _ in range(11)][-1] == 429
    assert _wrong(Client(REMOTE_ADDR="10.9.1.1", HTTP_X_FORWARDED_FOR="203.0.113.6, 192.0.2.7")) == 200


def test_without_proxy_settings_a_forged_forwarded_for_changes_nothing(db):
    statuses = [_wrong(Client(REMOTE_ADDR="198.51.100.1", HTTP_X_FORWARDED_FOR=f"203.0.113.{n}")) for n in range(11)]
    assert statuses[-1] == 429


def test_one_account_attacked_from_many_addresses_is_braked_with_backoff(admin):
    statuses = [_wrong(Client(REMOTE_ADDR=f"198.51.100.{n}"), admin.username) for n in range(5)]
    assert statuses == [200] * 5
    response = Client(REMOTE_ADDR="198.51.100.99").post("/login/", {"username": admin.username, "password": PASSWORD})
    assert response.status_code == 429 and b"Too many failed log-ins for this account" in response.content
    assert 25 <= int(response["Retry-After"]) <= 30
    # Other accounts are not affected.
    assert _wrong(Client(REMOTE_ADDR="198.51.100.99"), "other@example.com") == 200


def test_the_wait_doubles_and_a_success_clears_the_account(admin):
    brake = AccountBrake("login", admin.username)
    for _ in range(6):
        brake.failed()
    assert 55 <= brake.wait() <= 60
    brake.succeeded()
    response = Client().post("/login/", {"username": admin.username.upper(), "password": PASSWORD})
    assert response.status_code == 302


def test_reset_mails_to_one_address_stop_at_five_an_hour_from_any_number_of_clients(admin):
    for n in range(7):
        response = Client(REMOTE_ADDR=f"198.51.100.{n}").post("/password-reset/", {"email": admin.email})
        assert response.status_code == 302
    assert send_account_mail() == ["sent"] * 5
    assert len(mail.outbox) == 5


def test_the_django_admin_is_off_unless_enabled(client):
    assert client.get("/admin/login/").status_code == 404


# --- Every spelling of one account, IPv6 networks, and resets ------------------------------------------------------


def _fullwidth(text: str) -> str:
    """ASCII letters and signs as their full-width forms, which NFKC (Django's username normalization) maps back."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def test_every_spelling_log_in_accepts_is_braked_as_the_one_account(admin):
    local, domain = admin.username.split("@")
    fullwidth = _fullwidth(admin.username)
    # The premise: log-in accepts the full-width spelling as the account itself.
    assert Client().post("/login/", {"username": fullwidth, "password": PASSWORD}).status_code == 302
    spellings = [fullwidth, admin.username.upper(), f" {_fullwidth(local)}@{domain} ", f"{local}＠{domain}",
                 admin.username.title()]
    statuses = [_wrong(Client(REMOTE_ADDR=f"198.51.100.{n}"), spelling) for n, spelling in enumerate(spellings)]
    assert statuses == [200] * 5
    response = Client(REMOTE_ADDR="198.51.100.99").post("/login/", {"username": admin.username, "password": PASSWORD})
    assert response.status_code == 429 and b"Too many failed log-ins for this account" in response.content
    braked = Client(REMOTE_ADDR="198.51.100.98").post("/login/", {"username": fullwidth, "password": PASSWORD})
    assert braked.status_code == 429 and "_auth_user_id" not in braked.wsgi_request.session


def test_spellings_of_an_address_without_an_account_share_one_bucket_too(db):
    spellings = ["ghost@corp.example", _fullwidth("ghost@corp.example"), "GHOST@CORP.EXAMPLE", "Ghost@corp.example ",
                 "ghost＠corp.example"]
    for n, spelling in enumerate(spellings):
        assert _wrong(Client(REMOTE_ADDR=f"198.51.100.{n}"), spelling) == 200
    assert Client(REMOTE_ADDR="198.51.100.99").post(
        "/login/", {"username": "ghost@corp.example", "password": "x"}
    ).status_code == 429


def test_ipv6_clients_of_one_64_share_the_address_brake_and_the_next_64_does_not(db):
    statuses = [_wrong(Client(REMOTE_ADDR=f"2001:db8:1:2::{n:x}")) for n in range(1, 11)]
    assert statuses == [200] * 10
    assert _wrong(Client(REMOTE_ADDR="2001:db8:1:2:ffff:ffff:ffff:fffe")) == 429
    assert _wrong(Client(REMOTE_ADDR="2001:db8:1:3::1")) == 200


def test_an_ipv4_mapped_client_counts_as_its_ipv4_address(db):
    for _ in range(10):
        _wrong(Client(REMOTE_ADDR="192.0.2.55"))
    assert _wrong(Client(REMOTE_ADDR="::ffff:192.0.2.55")) == 429


def test_a_password_reset_clears_the_account_brake(admin, mailoutbox):
    for n in range(6):
        _wrong(Client(REMOTE_ADDR=f"198.51.100.{n}"), admin.username)
    assert Client().post("/login/", {"username": admin.username, "password": PASSWORD}).status_code == 429
    owner = Client(REMOTE_ADDR="192.0.2.1")
    assert owner.post("/password-reset/", {"email": admin.email}).status_code == 302
    send_account_mail()
    done = set_password_through(owner, reset_link_path(mailoutbox[-1]))
    assert done.redirect_chain == [("/password-reset/done/", 302)]
    response = owner.post("/login/", {"username": admin.username, "password": NEW_PASSWORD})
    assert response.status_code == 302 and owner.session["_auth_user_id"] == str(admin.pk)
