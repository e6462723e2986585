"""Issue 35 items 3 and 4 in a real browser: a squatter signs up with the victim's address and cannot log in; the
victim signs up too, follows the mailed link, names and confirms the address with a password of their own, and the
squatter's session and key (from before the rule) stop working. Then the victim, signed in, opens a link the
squatter sends for another account: told, never switched."""

import requests
from django.contrib.auth import get_user_model
from django.test import Client

from orgs.keys import VISIBLE_PREFIX_LENGTH, digest_key, generate_key
from orgs.models import ApiKey, Organization
from orgs.verification import is_verified
from tests.support.accounts import confirmation_code
from tests.support.browser import BROWSER_MARKS, shot

pytestmark = BROWSER_MARKS

VICTIM = "chef@trattoria.example"
SQUATTER_PASSWORD = "squatters-own-passphrase"
VICTIM_PASSWORD = "the-real-chefs-passphrase"


def sign_up(page, live_server, email, password, org_name):
    from playwright.sync_api import expect

    page.goto(f"{live_server.url}/signup/")
    page.get_by_label("Organization name").fill(org_name)
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Create organization").click()
    expect(page.get_by_test_id("signup-sent")).to_be_visible()


def log_in(page, live_server, email, password):
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def me(live_server, plaintext):
    return requests.get(f"{live_server.url}/v1/me", headers={"Authorization": f"Bearer {plaintext}"}, timeout=10)


def test_a_squatted_address_goes_back_to_its_owner_in_a_real_browser(live_server, browser, page, mailoutbox):
    from playwright.sync_api import expect

    # The squatter signs up with the victim's address, and cannot log in.
    sign_up(page, live_server, VICTIM, SQUATTER_PASSWORD, "Squat")
    log_in(page, live_server, VICTIM, SQUATTER_PASSWORD)
    expect(page.get_by_text("Confirm your e-mail address before you log in")).to_be_visible()
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    shot(page, "takeover-01-squatter-refused")

    # What a squatter held from before the rule: a session (made without the log-in form) and a key.
    account = get_user_model().objects.get(username=VICTIM)
    old = Client()
    assert old.login(username=VICTIM, password=SQUATTER_PASSWORD)
    squatter = browser.new_context()
    squatter.add_cookies([{"name": "sessionid", "value": old.cookies["sessionid"].value, "url": live_server.url}])
    squatter_page = squatter.new_page()
    squatter_page.goto(f"{live_server.url}/")
    expect(squatter_page.get_by_test_id("current-org")).to_have_text("Squat")
    plaintext = generate_key()
    ApiKey.objects.create(organization=Organization.objects.get(name="Squat"), name="squat", scope="read_write",
                          created_by=account, key_prefix=plaintext[:VISIBLE_PREFIX_LENGTH],
                          key_digest=digest_key(plaintext))
    assert me(live_server, plaintext).status_code == 200

    # The victim signs up with their address: the "account exists" mail carries a confirmation link.
    victim = browser.new_context()
    victim_page = victim.new_page()
    victim_page.set_default_timeout(15_000)
    sign_up(victim_page, live_server, VICTIM, VICTIM_PASSWORD, "Real")
    assert len(mailoutbox) == 2 and "already has an account" in mailoutbox[1].body
    victim_page.goto(f"{live_server.url}/verify-email/#{confirmation_code(mailoutbox[1])}")
    victim_page.get_by_role("button", name="Continue").click()
    expect(victim_page.get_by_role("heading", name=f"Confirm {VICTIM}")).to_be_visible()
    victim_page.get_by_label("Password", exact=True).fill(VICTIM_PASSWORD)
    victim_page.get_by_label("Password again").fill(VICTIM_PASSWORD)
    shot(victim_page, "takeover-02-owner-confirms")
    victim_page.get_by_role("button", name=f"Confirm {VICTIM}").click()
    expect(victim_page.get_by_role("heading", name="Overview")).to_be_visible()
    expect(victim_page.get_by_text(f"Thank you: {VICTIM} is confirmed.")).to_be_visible()

    # The squatter's session, key and password are gone.
    squatter_page.goto(f"{live_server.url}/")
    expect(squatter_page.get_by_role("heading", name="Log in")).to_be_visible()
    assert me(live_server, plaintext).status_code == 401
    log_in(squatter_page, live_server, VICTIM, SQUATTER_PASSWORD)
    expect(squatter_page.get_by_role("heading", name="Log in")).to_be_visible()
    expect(squatter_page.get_by_test_id("form-errors")).to_be_visible()
    shot(squatter_page, "takeover-03-squatter-out")

    # Login CSRF: the squatter signs up another address and sends its link; the signed-in victim is told.
    sign_up(page, live_server, "attacker@evil.example", SQUATTER_PASSWORD, "Bait")
    victim_page.goto(f"{live_server.url}/verify-email/#{confirmation_code(mailoutbox[-1])}")
    victim_page.get_by_role("button", name="Continue").click()
    expect(victim_page.get_by_test_id("verify-other-account")).to_contain_text("attacker@evil.example")
    shot(victim_page, "takeover-04-other-accounts-link")
    victim_page.goto(f"{live_server.url}/")
    expect(victim_page.get_by_role("heading", name="Overview")).to_be_visible()
    expect(victim_page.get_by_test_id("current-org")).to_have_text("Squat")  # still the victim, in their org
    assert not is_verified(get_user_model().objects.get(username="attacker@evil.example"))
    squatter.close()
    victim.close()
