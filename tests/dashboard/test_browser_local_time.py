"""A real browser reads the dashboard in the organization's time zone: a booking made for 03:30 UTC in a Los Angeles
calendar shows at its local evening time with its zone named, and Settings refuses a zone that is not an IANA name
beside the field. Headless Debian Chromium via Playwright; screenshots go to test-artifacts/screenshots/
(local-time-*.png)."""

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from knowledge.services import calendar_create, location_create
from orgs.models import Organization
from tests.factories import MembershipFactory, OrganizationFactory
from tests.support.bookings import ALL_WEEK, make_booking
from tests.support.browser import BROWSER_MARKS, log_in, shot

pytestmark = BROWSER_MARKS


@pytest.mark.django_db(transaction=True)
def test_a_booking_shows_at_its_local_time_in_a_real_browser(live_server, page):
    from playwright.sync_api import expect

    org = OrganizationFactory(name="Venice Tacos")
    admin = MembershipFactory(organization=org, role="admin").user
    location_create(org=org, name="Venice Beach", address="1 Ocean Front Walk", timezone="America/Los_Angeles",
                    phone_number="+13105550100")
    calendar = calendar_create(org=org, name="Tables", timezone_name="America/Los_Angeles", slot_minutes=60,
                               weekly_hours=ALL_WEEK)
    start = (timezone.now() + timedelta(days=3)).replace(hour=3, minute=30, second=0, microsecond=0)
    make_booking(org, calendar, start)
    local = start.astimezone(ZoneInfo("America/Los_Angeles"))  # the evening before, 19:30 or 20:30
    assert local.date() == start.date() - timedelta(days=1)

    log_in(page, live_server, admin.email)
    expect(page.get_by_role("heading", name="Overview", exact=True)).to_be_visible()
    expect(page.get_by_text("(America/Los_Angeles)")).to_be_visible()  # the first location gave the org its zone

    page.goto(f"{live_server.url}/bookings/")
    row = page.get_by_test_id("booking-row")
    expect(row.get_by_test_id("booking-when")).to_have_text(
        f"{local:%a %b %-d, %H:%M}–{local + timedelta(hours=1):%H:%M}")
    expect(row.get_by_test_id("booking-zone")).to_have_text("America/Los_Angeles")
    assert f"{start:%H:%M}" not in row.get_by_test_id("booking-when").inner_text()  # not the UTC time
    shot(page, "local-time-01-bookings")

    # Settings: a made-up zone is refused beside the field, and nothing changes.
    page.goto(f"{live_server.url}/settings/")
    zone_field = page.get_by_label("Time zone")
    expect(zone_field).to_have_value("America/Los_Angeles")
    zone_field.fill("America/Springfield")
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_test_id("error-time_zone")).to_contain_text("Enter a valid IANA time zone")
    shot(page, "local-time-02-invalid-zone")
    assert Organization.objects.get(pk=org.pk).time_zone == "America/Los_Angeles"

    # A real one is kept; the booking still shows at its calendar's time, and when that is for the organization.
    page.get_by_label("Time zone").fill("Europe/Paris")
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_text("Settings saved.")).to_be_visible()
    assert Organization.objects.get(pk=org.pk).time_zone == "Europe/Paris"
    page.goto(f"{live_server.url}/bookings/")
    paris = start.astimezone(ZoneInfo("Europe/Paris"))
    expect(page.get_by_test_id("booking-when")).to_have_text(
        f"{local:%a %b %-d, %H:%M}–{local + timedelta(hours=1):%H:%M}")
    expect(page.get_by_test_id("booking-row")).to_contain_text(f"{paris:%a %H:%M} in Europe/Paris")
    shot(page, "local-time-03-bookings-paris")
