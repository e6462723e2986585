"""Settings → Calendars (members read, admins change, the weekly-hours editor) and the Bookings page (upcoming
first, filters, cancel for every member; the call page links its bookings)."""

from datetime import UTC, datetime, timedelta

import pytest

from knowledge.models import Calendar
from knowledge.services import calendar_create
from tests.support.bookings import ALL_WEEK, make_booking
from tests.support.runtime import Runtime

pytestmark = pytest.mark.django_db



@pytest.fixture
def calendar(org):
    return calendar_create(org=org, name="Tables", timezone_name="Europe/Paris", slot_minutes=60, weekly_hours=ALL_WEEK)


def test_an_admin_creates_a_calendar_with_the_weekly_hours_editor(admin_client, org):
    page = admin_client.get("/settings/calendars/new/").content.decode()
    assert 'data-testid="weekly-hours"' in page and "Monday" in page
    response = admin_client.post("/settings/calendars/new/", {
        "name": "Tables", "timezone": "America/New_York", "slot_minutes": "45", "location": "",
        "hours_mon": "09:00-12:00, 13:00-17:30", "hours_tue": "", "hours_wed": "10:00-24:00", "hours_thu": "",
        "hours_fri": "", "hours_sat": "", "hours_sun": ""})
    assert response.status_code == 302, response.content.decode()[:2000]
    calendar = Calendar.objects.get()
    assert calendar.weekly_hours == [{"day": "mon", "start": "09:00", "end": "12:00"},
                                     {"day": "mon", "start": "13:00", "end": "17:30"},
                                     {"day": "wed", "start": "10:00", "end": "24:00"}]
    served = Runtime(org).knowledge().json()["data"]["calendars"]
    assert [(c["name"], c["slot_minutes"], c["weekly_hours"]) for c in served] == [
        ("Tables", 45, calendar.weekly_hours)]
    edit = admin_client.get(f"/settings/calendars/{calendar.pk}/edit/").content.decode()
    assert "09:00-12:00, 13:00-17:30" in edit


def test_bad_hours_are_shown_and_nothing_is_written(admin_client):
    response = admin_client.post("/settings/calendars/new/", {
        "name": "Tables", "timezone": "America/New_York", "slot_minutes": "30", "location": "",
        "hours_mon": "12:00-09:00", "hours_tue": "9-5"})
    body = response.content.decode()
    assert response.status_code == 200
    assert "Weekly hours: Item 0: start must be before end." in body
    assert "Weekly hours: Item 1: start and end must be HH:MM (end may be 24:00)." in body
    assert not Calendar.objects.exists()
    bad_zone = admin_client.post("/settings/calendars/new/", {"name": "T", "timezone": "Mars/Base",
                                                              "slot_minutes": "30"})
    assert "Enter a valid IANA time zone" in bad_zone.content.decode()


def test_members_read_calendars_but_cannot_change_them(member_client, calendar):
    assert "Tables" in member_client.get("/settings/calendars/").content.decode()
    for path in ("/settings/calendars/new/", f"/settings/calendars/{calendar.pk}/edit/",
                 f"/settings/calendars/{calendar.pk}/delete/"):
        assert member_client.get(path).status_code == 403
        assert member_client.post(path, {"name": "x"}).status_code == 403
    assert Calendar.objects.get().name == "Tables"


def test_a_calendar_with_upcoming_bookings_is_not_deleted(admin_client, org, calendar):
    make_booking(org, calendar, datetime.now(UTC).replace(minute=0, second=0, microsecond=0) + timedelta(days=2))
    page = admin_client.get(f"/settings/calendars/{calendar.pk}/delete/").content.decode()
    assert 'data-testid="calendar-has-bookings"' in page
    followed = admin_client.post(f"/settings/calendars/{calendar.pk}/delete/", follow=True).content.decode()
    assert "upcoming confirmed bookings" in followed and Calendar.objects.exists()


def test_bookings_page_upcoming_first_filters_and_a_member_cancels(member_client, org, calendar):
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    past = make_booking(org, calendar, now - timedelta(days=3))
    later = make_booking(org, calendar, now + timedelta(days=5))
    sooner = make_booking(org, calendar, now + timedelta(days=1))
    page = member_client.get("/bookings/").content.decode()
    assert page.index(str(sooner.pk)) < page.index(str(later.pk)) < page.index(str(past.pk))
    filtered = member_client.get("/bookings/", {"status": "canceled"}).content.decode()
    assert "No bookings match these filters." in filtered

    response = member_client.post(f"/bookings/{later.pk}/cancel", {"next": f"/calls/{later.call_id}"})
    assert response.status_code == 302 and response["Location"] == f"/calls/{later.call_id}"
    later.refresh_from_db()
    assert later.status == "canceled"
    assert str(later.pk) in member_client.get("/bookings/", {"status": "canceled"}).content.decode()
    evil = member_client.post(f"/bookings/{sooner.pk}/cancel", {"next": "https://evil.example/x"})
    assert evil["Location"] == "/bookings/"  # never an open redirect


def test_the_call_page_links_its_bookings(admin_client, org, calendar):
    start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) + timedelta(days=1)
    booking = make_booking(org, calendar, start)
    page = admin_client.get(f"/calls/{booking.call_id}").content.decode()
    assert 'data-testid="call-bookings"' in page and str(booking.pk) in page and "Ada Lovelace" in page


def test_another_orgs_booking_cannot_be_canceled(outsider_client, org, calendar):
    start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) + timedelta(days=1)
    booking = make_booking(org, calendar, start)
    assert outsider_client.post(f"/bookings/{booking.pk}/cancel").status_code == 404
    booking.refresh_from_db()
    assert booking.status == "confirmed"
