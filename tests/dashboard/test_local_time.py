"""The dashboard speaks the organization's time zone: every time shown, the list filters' days and the overview's
days are local; a booking shows at its calendar's local time with the zone named; the API stays UTC."""

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from calls.selectors import calls_per_day
from dashboard.pages.overview import build_chart, day_starts
from knowledge.services import calendar_create
from tests.support.bookings import ALL_WEEK, make_booking
from tests.support.dashboard_calls import bulk_calls
from tests.support.webhooks import make_subscription
from webhooks.models import Delivery
from webhooks.services import emit

pytestmark = pytest.mark.django_db

LA = ZoneInfo("America/Los_Angeles")
# 03:30 UTC on a Wednesday in July is 20:30 on Tuesday in Los Angeles (PDT, UTC-7).
LATE_CALL = datetime(2026, 7, 15, 3, 30, tzinfo=UTC)


def in_zone(org, name):
    org.time_zone = name
    org.save(update_fields=["time_zone"])
    return org


def test_a_call_at_0330_utc_shows_as_the_previous_evening_in_los_angeles(admin_client, org):
    [call] = bulk_calls(in_zone(org, "America/Los_Angeles"), 1, start=LATE_CALL)
    listed = admin_client.get("/calls/").content.decode()
    assert "Jul 14, 20:30" in listed and "Jul 15, 03:30" not in listed
    assert "Times are in America/Los_Angeles." in listed
    detail = admin_client.get(f"/calls/{call.pk}").content.decode()
    assert "Tuesday, Jul 14, 2026 · 20:30 PDT" in detail
    assert '<time datetime="2026-07-14T20:30:00-07:00">' in detail  # the same instant, machine-readable


def test_the_same_call_in_a_utc_org_shows_at_0330(admin_client, org):
    [call] = bulk_calls(org, 1, start=LATE_CALL)
    assert "Jul 15, 03:30" in admin_client.get("/calls/").content.decode()
    assert "Wednesday, Jul 15, 2026 · 03:30 UTC" in admin_client.get(f"/calls/{call.pk}").content.decode()


def test_the_lists_day_filters_are_local_days(admin_client, org):
    [call] = bulk_calls(in_zone(org, "America/Los_Angeles"), 1, start=LATE_CALL)
    row = f'data-call-id="{call.pk}"'
    assert row in admin_client.get("/calls/?since=2026-07-14&until=2026-07-14").content.decode()
    assert row not in admin_client.get("/calls/?since=2026-07-15&until=2026-07-15").content.decode()


def test_the_api_stays_utc_for_an_org_in_los_angeles(admin_client, api, org):
    [call] = bulk_calls(in_zone(org, "America/Los_Angeles"), 1, start=LATE_CALL)
    admin_client.get("/calls/")  # a dashboard request before: its zone must not leak into the API's
    item = api.get(f"/v1/calls/{call.pk}").json()["data"]
    assert item["started_at"] == "2026-07-15T03:30:00.000Z"
    assert item["ended_at"] == "2026-07-15T03:31:00.000Z"
    [listed] = api.get("/v1/calls").json()["data"]
    assert listed["started_at"] == "2026-07-15T03:30:00.000Z"
    # The API's day filters stay UTC too: since/until are UTC timestamps.
    assert api.get("/v1/calls?since=2026-07-15T03:00:00Z").json()["data"][0]["id"] == str(call.pk)


def test_the_zone_is_active_only_while_a_dashboard_page_runs(admin_client, org):
    in_zone(org, "Asia/Tokyo")
    assert admin_client.get("/").status_code == 200
    assert timezone.get_current_timezone_name() == "UTC"


def test_a_booking_shows_at_its_calendars_local_time_with_the_zone_named(admin_client, org):
    in_zone(org, "Europe/Paris")
    calendar = calendar_create(org=org, name="Tables", timezone_name="America/Los_Angeles", slot_minutes=60,
                               weekly_hours=ALL_WEEK)
    start = (timezone.now() + timedelta(days=3)).replace(hour=3, minute=30, second=0, microsecond=0)
    booking = make_booking(org, calendar, start)
    local, paris = start.astimezone(LA), start.astimezone(ZoneInfo("Europe/Paris"))
    page = admin_client.get("/bookings/").content.decode()
    assert f'data-testid="booking-when">{local:%a %b %-d, %H:%M}–{local + timedelta(hours=1):%H:%M}</time>' in page
    assert 'data-testid="booking-zone">America/Los_Angeles<' in page
    assert f"{paris:%a %H:%M} in Europe/Paris" in page  # and when that is for the organization
    call_page = admin_client.get(f"/calls/{booking.call_id}").content.decode()
    assert f"{local:%a %b %-d, %H:%M}" in call_page and "America/Los_Angeles" in call_page


# --- The overview's days -----------------------------------------------------------------------------------------

# Los Angeles left DST on Sunday, November 1, 2026 at 02:00 PDT (09:00 UTC): that day has 25 hours.
FALL_CALLS = {
    datetime(2026, 11, 1, 6, 59, tzinfo=UTC): date(2026, 10, 31),   # 23:59 PDT, Saturday
    datetime(2026, 11, 1, 7, 0, tzinfo=UTC): date(2026, 11, 1),     # 00:00 PDT, Sunday's first minute
    datetime(2026, 11, 1, 8, 30, tzinfo=UTC): date(2026, 11, 1),    # 01:30 PDT
    datetime(2026, 11, 1, 9, 30, tzinfo=UTC): date(2026, 11, 1),    # 01:30 PST, the repeated hour
    datetime(2026, 11, 2, 7, 59, tzinfo=UTC): date(2026, 11, 1),    # 23:59 PST, Sunday's last minute
    datetime(2026, 11, 2, 8, 0, tzinfo=UTC): date(2026, 11, 2),     # 00:00 PST, Monday
}


def test_the_overviews_days_start_at_local_midnight_across_the_fall_dst_change(org):
    in_zone(org, "America/Los_Angeles")
    for started_at in FALL_CALLS:
        bulk_calls(org, 1, start=started_at)
    now = datetime(2026, 11, 3, 18, 0, tzinfo=UTC)  # Tuesday 10:00 PST
    today, today_start, week_start, chart_since = day_starts(now, org.zone, days=14)
    assert (today, today_start, week_start, chart_since) == (
        date(2026, 11, 3), datetime(2026, 11, 3, 8, tzinfo=UTC), datetime(2026, 11, 2, 8, tzinfo=UTC),
        datetime(2026, 10, 21, 7, tzinfo=UTC))  # 14 days back is PDT: midnight there is 07:00 UTC
    rows = calls_per_day(org=org, since=chart_since)
    per_day = {row["day"]: 0 for row in rows}
    for row in rows:
        per_day[row["day"]] += row["calls"]
    expected = {day: list(FALL_CALLS.values()).count(day) for day in FALL_CALLS.values()}
    assert per_day == expected == {date(2026, 10, 31): 1, date(2026, 11, 1): 4, date(2026, 11, 2): 1}
    table = {row["day"]: row["total"] for row in build_chart(rows, days=14, today=today)["table"]}
    assert {day: table[day] for day in expected} == expected and sum(table.values()) == 6


def test_the_overviews_days_start_at_local_midnight_across_the_spring_dst_change(org):
    # Los Angeles entered DST on Sunday, March 8, 2026 at 02:00 PST: that day has 23 hours.
    in_zone(org, "America/Los_Angeles")
    calls = {datetime(2026, 3, 8, 7, 59, tzinfo=UTC): date(2026, 3, 7),   # 23:59 PST, Saturday
             datetime(2026, 3, 8, 8, 0, tzinfo=UTC): date(2026, 3, 8),    # 00:00 PST, Sunday
             datetime(2026, 3, 9, 6, 59, tzinfo=UTC): date(2026, 3, 8),   # 23:59 PDT, Sunday
             datetime(2026, 3, 9, 7, 0, tzinfo=UTC): date(2026, 3, 9)}    # 00:00 PDT, Monday
    for started_at in calls:
        bulk_calls(org, 1, start=started_at)
    now = datetime(2026, 3, 10, 17, 0, tzinfo=UTC)  # Tuesday 10:00 PDT
    _, today_start, week_start, chart_since = day_starts(now, org.zone, days=14)
    assert (today_start, week_start, chart_since) == (
        datetime(2026, 3, 10, 7, tzinfo=UTC), datetime(2026, 3, 9, 7, tzinfo=UTC),
        datetime(2026, 2, 25, 8, tzinfo=UTC))  # 14 days back is PST: midnight there is 08:00 UTC
    rows = calls_per_day(org=org, since=chart_since)
    assert sorted((row["day"], row["calls"]) for row in rows) == [
        (date(2026, 3, 7), 1), (date(2026, 3, 8), 2), (date(2026, 3, 9), 1)]


def test_the_overview_page_counts_today_from_local_midnight(admin_client, org):
    in_zone(org, "Pacific/Kiritimati")  # UTC+14: its day differs from UTC's most of the time
    local_midnight = datetime.combine(timezone.localtime(timezone=org.zone).date(), datetime.min.time(),
                                      tzinfo=org.zone)
    bulk_calls(org, 1, start=local_midnight + timedelta(seconds=1))
    bulk_calls(org, 1, start=local_midnight - timedelta(seconds=1))
    response = admin_client.get("/")
    assert response.context["counts"]["totals"]["today"] == 1
    assert response.context["today"] == local_midnight.date()
    assert response.context["chart"]["table"][-1]["total"] == 1
    assert response.context["chart"]["table"][-2]["total"] == 1
    assert "(Pacific/Kiritimati)" in response.content.decode()


def test_the_webhook_replay_reads_its_times_in_the_orgs_zone(admin_client, org):
    in_zone(org, "Pacific/Kiritimati")  # UTC+14: read as UTC, an hour ago there would be 13 hours ahead
    sub = make_subscription(org, enabled=False)
    missed = emit(org=org, type="call.ended", data={})  # while disabled: no delivery yet
    sub.enabled = True
    sub.save()
    since = (timezone.now() - timedelta(hours=1)).astimezone(org.zone).strftime("%Y-%m-%dT%H:%M")
    done = admin_client.post(f"/settings/webhooks/{sub.pk}/replay/", {"since": since}, follow=True)
    assert "1 event queued" in done.content.decode()
    assert Delivery.objects.get(subscription=sub).event_id == missed.id


def test_canceling_a_booking_says_when_it_was_in_its_calendars_zone(admin_client, org):
    calendar = calendar_create(org=org, name="Tables", timezone_name="America/Los_Angeles", slot_minutes=60,
                               weekly_hours=ALL_WEEK)
    start = (timezone.now() + timedelta(days=3)).replace(hour=3, minute=30, second=0, microsecond=0)
    booking = make_booking(org, calendar, start)
    page = admin_client.post(f"/bookings/{booking.pk}/cancel", follow=True).content.decode()
    assert f"on {start.astimezone(LA):%b %-d, %H:%M} America/Los_Angeles canceled" in page


def test_new_calendars_and_locations_start_from_the_organizations_zone(admin_client, org):
    assert 'name="timezone" value="UTC"' in admin_client.get("/settings/calendars/new/").content.decode()
    assert 'name="timezone" value=' not in admin_client.get("/locations/new/").content.decode()  # pick the first
    in_zone(org, "America/Chicago")
    assert 'name="timezone" value="America/Chicago"' in admin_client.get("/settings/calendars/new/").content.decode()
    assert 'name="timezone" value="America/Chicago"' in admin_client.get("/locations/new/").content.decode()
