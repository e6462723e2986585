"""A real browser clicks "Export CSV": with a place free the CSV downloads and the page stays; with the
organization's export place held (another download of it, in another process) the click lands back on the list
with the message. The buttons carried the `download` attribute until 2026-11-26, and with it Chromium saved the
redirect's HTML page as the download: the admin never saw why nothing came. Headless Debian Chromium via
Playwright; screenshots go to test-artifacts/screenshots/ (exports-*.png)."""

import pytest

from contacts.models import Contact
from core.csvexport import take_places
from tests.factories import MembershipFactory, OrganizationFactory
from tests.support.browser import BROWSER_MARKS, log_in, shot

pytestmark = BROWSER_MARKS


@pytest.mark.django_db(transaction=True)
def test_export_csv_downloads_when_free_and_says_why_when_the_organization_is_exporting(live_server, page):
    from playwright.sync_api import expect

    org = OrganizationFactory(name="Export Pizzeria")
    admin = MembershipFactory(organization=org, role="admin").user
    Contact.objects.create(organization=org, phone_number="+14155550100", phone_digits="14155550100",
                           name="Ada Export", source="manual")
    log_in(page, live_server, admin.email)
    expect(page.get_by_role("heading", name="Overview", exact=True)).to_be_visible()

    page.goto(f"{live_server.url}/contacts/")
    with page.expect_download() as download:
        page.get_by_test_id("contacts-export").click()
    assert download.value.suggested_filename.endswith(".csv")
    assert "Ada Export" in download.value.path().read_text(encoding="utf-8")

    held = take_places(org.pk)  # another download of the organization, in another process
    try:
        page.get_by_test_id("contacts-export").click()
        expect(page.locator(".flashes")).to_contain_text("An export of your organization is running: try again in")
        assert page.url == f"{live_server.url}/contacts/"
        shot(page, "exports-01-busy")
    finally:
        held.release()
