"""Issue 35, items 3, 4, 9 and 11: an address is owned by whoever reads its mail, not by whoever signed up with it.

An unconfirmed account neither signs in nor makes API keys; confirming an account never confirmed before makes the
confirmer choose its password, which ends the sessions the account had, and revokes the keys it made. The
confirmation page takes two clicks, the second on a button that names the address, and never switches a signed-in
user (login CSRF). The sign-up mail carries nothing the signer-up typed but the address. The confirmation code dies
when the password changes."""

import re

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from audit.models import AuditEvent
from orgs import services
from orgs.keys import VISIBLE_PREFIX_LENGTH, digest_key, generate_key
from orgs.models import ApiKey, Organization
from orgs.verification import EmailNotVerified, VerificationInvalid, code_for, is_verified, mark_verified, verify
from tests.factories import MembershipFactory, OrganizationFactory, UserFactory
from tests.support.accounts import (
    NEW_PASSWORD,
    confirm_through,
    confirmation_code,
    reset_link_path,
    send_account_mail,
    set_password_through,
)
from tests.support.clients import PASSWORD, logged_in

pytestmark = pytest.mark.django_db
User = get_user_model()
VICTIM = "chef@trattoria.example"
SQUATTER_PASSWORD = "squatters-own-passphrase"


def _sign_up(email, password="a-long-unusual-passphrase", org_name="Trattoria"):
    response = Client().post("/signup/", {"email": email, "password": password, "organization_name": org_name})
    assert (response.status_code, response["Location"]) == (302, "/signup/sent/")


def _legacy_key(user, org) -> tuple[ApiKey, str]:
    """A key the account made before the rule (a squatter's from before this change): written as the service did."""
    plaintext = generate_key()
    key = ApiKey.objects.create(organization=org, name="squat", scope="read_write", created_by=user,
                                key_prefix=plaintext[:VISIBLE_PREFIX_LENGTH], key_digest=digest_key(plaintext))
    return key, plaintext


def _me(client, plaintext):
    return client.get("/v1/me", HTTP_AUTHORIZATION=f"Bearer {plaintext}").status_code


def _login(client, email, password):
    return client.post("/login/", {"username": email, "password": password})


# --- item 3: an unconfirmed account -------------------------------------------------------------------------


def test_an_unconfirmed_account_does_not_sign_in_with_its_right_password(mailoutbox):
    _sign_up(VICTIM, password=SQUATTER_PASSWORD)
    client = Client()
    response = _login(client, VICTIM, SQUATTER_PASSWORD)
    assert response.status_code == 200 and "_auth_user_id" not in client.session
    assert "Confirm your e-mail address before you log in" in response.content.decode()
    assert not AuditEvent.objects.filter(action="auth.signed_in").exists()
    # Once confirmed by the mailbox's owner (who chose the password), it signs in.
    confirm_through(Client(), confirmation_code(mailoutbox[0]))
    assert _login(Client(), VICTIM, NEW_PASSWORD).status_code == 302


def test_an_unconfirmed_admin_makes_no_api_key(org):
    owner = UserFactory(email_verified=False)
    MembershipFactory(user=owner, organization=org, role="admin")
    response = logged_in(owner).post("/settings/api-keys/new/", {"name": "Integration", "scope": "read"})
    assert response.status_code == 403
    assert "Confirm your e-mail address before creating API keys" in response.content.decode()
    assert not ApiKey.objects.exists() and not AuditEvent.objects.filter(action="api_key.created").exists()
    with pytest.raises(EmailNotVerified):
        services.api_key_create(org=org, created_by=owner, name="x", scope="read")
    mark_verified(user=owner)
    assert services.api_key_create(org=org, created_by=owner, name="x", scope="read")[0].pk


def test_the_owner_confirming_a_squatted_address_chooses_the_password_and_the_squatter_loses_everything(mailoutbox):
    # The squatter signs up with the victim's address and (from before this rule) holds a session and a key.
    _sign_up(VICTIM, password=SQUATTER_PASSWORD, org_name="Squat")
    account = User.objects.get(username=VICTIM)
    squatter = Client()
    assert squatter.login(username=VICTIM, password=SQUATTER_PASSWORD)
    key, plaintext = _legacy_key(account, Organization.objects.get(name="Squat"))
    assert squatter.get("/").status_code == 200 and _me(Client(), plaintext) == 200

    # The owner signs up too: the address has an account, so they get the "account exists" mail with a link.
    _sign_up(VICTIM, password="owners-first-try-passphrase", org_name="Real")
    assert len(mailoutbox) == 2 and "already has an account" in mailoutbox[1].body
    owner = Client()
    done = confirm_through(owner, confirmation_code(mailoutbox[1]), password=NEW_PASSWORD)
    assert done.redirect_chain == [("/", 302)] and owner.session["_auth_user_id"] == str(account.pk)

    account.refresh_from_db()
    assert is_verified(account) and account.check_password(NEW_PASSWORD)
    assert not account.check_password(SQUATTER_PASSWORD)
    # The squatter's session ended, its key is revoked (at once, on every process), its password is gone.
    assert squatter.get("/")["Location"].startswith("/login/")
    assert _me(Client(), plaintext) == 401
    key.refresh_from_db()
    assert key.revoked_at is not None
    revoked = AuditEvent.objects.get(action="api_key.revoked")
    assert (revoked.actor_type, revoked.target_id) == ("system", str(key.pk))
    assert _login(Client(), VICTIM, SQUATTER_PASSWORD).status_code == 200
    # The owner's session stays.
    assert owner.get("/").status_code == 200


def test_confirming_a_never_confirmed_account_without_a_password_confirms_nothing(mailoutbox):
    _sign_up(VICTIM)
    code = confirmation_code(mailoutbox[0])
    client = Client()
    refused = client.post("/verify-email/", {"code": code, "confirm": "1"})
    assert refused.status_code == 200 and 'data-testid="error-new_password1"' in refused.content.decode()
    mismatch = client.post("/verify-email/", {"code": code, "confirm": "1", "new_password1": NEW_PASSWORD,
                                              "new_password2": NEW_PASSWORD + "x"})
    assert 'data-testid="error-new_password2"' in mismatch.content.decode()
    similar = client.post("/verify-email/", {"code": code, "confirm": "1", "new_password1": "chef@trattoria",
                                             "new_password2": "chef@trattoria"})
    assert "too similar" in similar.content.decode()
    assert not is_verified(User.objects.get(username=VICTIM)) and "_auth_user_id" not in client.session


def test_an_account_confirmed_before_reconfirms_without_a_new_password_and_keeps_its_keys(org):
    user = UserFactory()  # confirmed at its first address
    MembershipFactory(user=user, organization=org, role="admin")
    key, plaintext = services.api_key_create(org=org, created_by=user, name="kept", scope="read")
    user.email = user.username = "new-address@example.com"
    user.save(update_fields=["email", "username"])
    client = logged_in(user)
    page = client.post("/verify-email/", {"code": code_for(user)})
    assert 'data-testid="confirm-account"' in page.content.decode() and "new_password1" not in page.content.decode()
    done = confirm_through(client, code_for(user), password=None)
    assert done.redirect_chain == [("/", 302)]
    assert is_verified(user) and User.objects.get(pk=user.pk).check_password(PASSWORD)
    assert _me(Client(), plaintext) == 200


def test_a_password_reset_of_a_never_confirmed_account_revokes_its_keys_too(org):
    account = UserFactory(email_verified=False)
    MembershipFactory(user=account, organization=org, role="admin")
    _, plaintext = _legacy_key(account, org)
    Client().post("/password-reset/", {"email": account.email})
    assert send_account_mail() == ["sent"]
    set_password_through(Client(), reset_link_path(mail.outbox[-1]))
    assert is_verified(account) and _me(Client(), plaintext) == 401


# --- item 4: login CSRF through the confirmation link ---------------------------------------------------------


def test_the_page_never_posts_the_code_by_itself():
    """The script that reads the link's fragment only fills the field in (the browser test clicks through)."""
    source = (settings.BASE_DIR / "dashboard" / "static" / "dashboard" / "dashboard.js").read_text()
    fragment_part = source.split("data-code-from-fragment", 1)[1].split("});", 1)[0]
    assert "submit()" not in fragment_part and "requestSubmit" not in fragment_part


def test_the_code_alone_changes_nothing_and_the_page_names_the_address(mailoutbox):
    _sign_up(VICTIM)
    code = confirmation_code(mailoutbox[0])
    visitor = Client()
    page = visitor.post("/verify-email/", {"code": code})
    html = page.content.decode()
    assert page.status_code == 200 and "_auth_user_id" not in visitor.session
    assert not is_verified(User.objects.get(username=VICTIM))
    assert re.search(r'<button type="submit" name="confirm" value="1"[^>]*>Confirm chef@trattoria\.example</button>',
                     html), html


def test_a_signed_in_user_opening_another_accounts_link_is_told_and_stays_themselves(mailoutbox, admin):
    _sign_up("attacker@evil.example")
    code = confirmation_code(mailoutbox[0])
    client = logged_in(admin)
    for data in ({"code": code}, {"code": code, "confirm": "1", "new_password1": NEW_PASSWORD,
                                   "new_password2": NEW_PASSWORD}):
        response = client.post("/verify-email/", data)
        assert response.status_code == 409
        assert 'data-testid="verify-other-account"' in response.content.decode()
        assert "attacker@evil.example" in response.content.decode()
        assert client.session["_auth_user_id"] == str(admin.pk)
    attacker = User.objects.get(username="attacker@evil.example")
    assert not is_verified(attacker) and not attacker.check_password(NEW_PASSWORD)


# --- item 9: the sign-up mail --------------------------------------------------------------------------------


def test_the_sign_up_mail_says_nothing_the_signer_up_typed(mailoutbox):
    _sign_up("someone@example.com", org_name="Win a prize!\nCall +1 555 0100 now\r\nhttps://evil.example/claim")
    (message,) = mailoutbox
    code = confirmation_code(message)
    assert message.subject == "Confirm your Voice Agent e-mail address"
    assert message.body == (
        "Hello,\n\n"
        "Someone, hopefully you, signed up for Voice Agent with this e-mail address. Confirm it and choose your "
        "password here:\n\n"
        f"{settings.DASHBOARD_URL}/verify-email/#{code}\n\n"
        f"If the page asks for a code, it is: {code}\n\n"
        "The link works once, for a few days. Nobody can log in to the account until the address is confirmed.\n"
        "If you did not sign up, ignore this e-mail.\n\n"
    )


@pytest.mark.parametrize("typed", ["Win\na\rprize", "Win\ta\x1b[31mprize\x7f", "Win \u2028a\u202eprize  ",
                                   "\x85Win a prize"])
def test_control_characters_leave_organization_names_wherever_they_are_set(typed, admin, org):
    _sign_up("someone@example.com", org_name=typed)
    assert Organization.objects.exclude(pk=org.pk).get().name in {"Win a prize", "Win a [31mprize"}
    name = services.organization_create_for(user=admin, name=typed).name
    assert "\n" not in name and "\r" not in name and not re.search(r"[\x00-\x1f\x7f-\x9f\u2028\u202e]", name)
    services.organization_update(org=org, by=admin, name=typed)
    org.refresh_from_db()
    assert org.name == name
    created, _ = services.organization_create(name=typed, admin_email="ops@example.com")
    assert created.name == name


def test_an_organization_name_of_control_characters_only_is_refused(client):
    response = client.post("/signup/", {"email": "a@example.com", "password": "a-long-unusual-passphrase",
                                        "organization_name": "\n\r\t"})
    assert response.status_code == 200 and not Organization.objects.exists()


# --- item 11: the code dies with the password ------------------------------------------------------------------


def test_the_confirmation_code_changes_when_the_password_does(mailoutbox):
    _sign_up(VICTIM)
    user = User.objects.get(username=VICTIM)
    code = code_for(user)
    user.set_password("another-long-passphrase")
    user.save(update_fields=["password"])
    assert code_for(user) != code
    with pytest.raises(VerificationInvalid):
        verify(code=code)
    response = Client().post("/verify-email/", {"code": confirmation_code(mailoutbox[0])})
    assert 'data-testid="error-code"' in response.content.decode()


def test_a_second_organization_of_a_confirmed_owner_is_not_affected(admin, org):
    """Confirmation touches only the account it is for: another account's keys and sessions stay."""
    other = OrganizationFactory()
    MembershipFactory(user=admin, organization=other, role="admin")
    _, plaintext = services.api_key_create(org=other, created_by=admin, name="theirs", scope="read")
    _sign_up(VICTIM)
    confirm_through(Client(), confirmation_code(mail.outbox[-1]))
    assert _me(Client(), plaintext) == 200 and logged_in(admin).get("/").status_code == 200


def test_a_nul_or_escape_in_a_name_from_any_service_is_cleaned(admin):
    assert services.organization_create_for(user=admin, name="A\x00B\x1b").name == "A B"
