"""One real browser walk through the key lifecycle: sign up → confirm the address by the mailed link → create key
→ shown once → list shows only the prefix → the key works on /v1/me → revoke → the key gets 401. Headless Debian
Chromium via Playwright."""


import requests

from tests.support.accounts import confirmation_code
from tests.support.browser import BROWSER_MARKS, shot

pytestmark = BROWSER_MARKS




def nav(page, name):
    return page.get_by_role("navigation", name="Main").get_by_role("link", name=name, exact=True)


def me(live_server, plaintext):
    return requests.get(f"{live_server.url}/v1/me", headers={"Authorization": f"Bearer {plaintext}"}, timeout=10)




def test_key_lifecycle_in_a_real_browser(live_server, page, mailoutbox):
    from playwright.sync_api import expect

    # Sign up.
    page.goto(f"{live_server.url}/signup/")
    shot(page, "01-signup")
    page.get_by_label("Organization name").fill("Trattoria Uno")
    page.get_by_label("Email").fill("owner@trattoria.example")
    page.get_by_label("Password").fill("a-long-unusual-passphrase")
    page.get_by_role("button", name="Create organization").click()
    expect(page.get_by_test_id("signup-sent")).to_be_visible()

    # The mailed link puts its code (the fragment) in the page's field and posts nothing: one click names the
    # address, a second confirms it, with the password the confirmer chooses, and logs in.
    (message,) = mailoutbox
    code = confirmation_code(message)
    page.goto(f"{live_server.url}/verify-email/#{code}")
    expect(page.get_by_label("Confirmation code")).to_have_value(code)
    assert "#" not in page.url
    page.get_by_role("button", name="Continue").click()
    page.get_by_label("Password", exact=True).fill("a-long-unusual-passphrase")
    page.get_by_label("Password again").fill("a-long-unusual-passphrase")
    page.get_by_role("button", name="Confirm owner@trattoria.example").click()
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    expect(page.get_by_test_id("current-org")).to_have_text("Trattoria Uno")
    shot(page, "02-overview")

    # Create a read+write key.
    nav(page, "API keys").click()
    expect(page.get_by_text("No API keys yet.")).to_be_visible()
    shot(page, "03-api-keys-empty")
    page.get_by_test_id("create-api-key").click()
    page.get_by_role("button", name="Create key").click()  # empty name: refused inline
    expect(page.get_by_test_id("error-name")).to_be_visible()
    shot(page, "04-api-key-new-error")
    page.get_by_label("Name").fill("Integration")
    page.get_by_label("Read and write").check()
    page.get_by_role("button", name="Create key").click()

    # Shown once.
    plaintext = page.get_by_test_id("api-key-plaintext").inner_text().strip()
    assert len(plaintext) == 40 and plaintext.startswith("va_live_")
    expect(page.get_by_text("It will not be shown again.")).to_be_visible()
    page.get_by_test_id("copy-api-key").click()
    expect(page.locator('[data-copy-status="new-key"]')).not_to_be_empty()
    shot(page, "05-api-key-created")
    page.reload()
    expect(page.get_by_role("heading", name="API keys")).to_be_visible()
    assert page.get_by_test_id("api-key-plaintext").count() == 0
    assert plaintext not in page.content()

    # The list shows only the prefix.
    expect(page.get_by_test_id("api-key-prefix")).to_have_text(f"{plaintext[:12]}…")
    expect(page.get_by_test_id("api-key-status")).to_have_text("Active")
    shot(page, "06-api-keys-list")

    # The key answers /v1/me.
    response = me(live_server, plaintext)
    assert response.status_code == 200
    assert response.json()["data"]["scopes"] == ["read", "write"]
    assert response.json()["data"]["org_name"] == "Trattoria Uno"

    # Revoke, with confirmation.
    page.get_by_test_id("revoke-api-key").click()
    expect(page.get_by_role("heading", name="Revoke “Integration”?")).to_be_visible()
    shot(page, "07-api-key-revoke-confirm")
    page.get_by_test_id("confirm-revoke").click()
    expect(page.get_by_test_id("api-key-status")).to_have_text("Revoked")
    shot(page, "08-api-keys-revoked")

    response = me(live_server, plaintext)
    assert response.status_code == 401
    assert response.json() == {"error": "unauthorized"}

    # The other pages, for the record.
    nav(page, "Members").click()
    page.get_by_label("Email").fill("waiter@trattoria.example")
    page.get_by_role("button", name="Send invitation").click()
    expect(page.get_by_text("Invitation sent to waiter@trattoria.example.")).to_be_visible()
    expect(page.get_by_test_id("invitation-row")).to_contain_text("waiter@trattoria.example")
    shot(page, "09-members")
    nav(page, "Organization").click()
    page.get_by_label("Default phone region").fill("IT")
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_text("Settings saved.")).to_be_visible()
    shot(page, "10-organization")
    # The same session on a phone-size screen.
    phone = page.context.browser.new_context(
        viewport={"width": 390, "height": 844}, storage_state=page.context.storage_state()
    )
    phone_page = phone.new_page()
    phone_page.goto(f"{live_server.url}/settings/api-keys/")
    assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(phone_page, "11-api-keys-phone")
    phone.close()
    page.get_by_test_id("logout").click()
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    shot(page, "12-login")
