"""Calendars and bookings (issue 14, items 2 and 3): /v1/calendars with its validation, /v1/bookings with filters
and cancel, the runtime's availability (weekly hours in the calendar's time zone, across a DST change, minus
confirmed bookings), and a runtime booking outside the hours or over a confirmed one refused with 409, the overlap
held by PostgreSQL under concurrency."""

from datetime import UTC, datetime, timedelta

import pytest

from calls.models import Booking
from calls.selectors import booking_list
from knowledge.models import Calendar
from knowledge.services import calendar_create
from orgs.models import Location
from tests.support.bookings import MONDAY_1400Z, WEEKDAYS_9_TO_12, book
from tests.support.races import run_together
from tests.support.runtime import Runtime, iso
from webhooks.models import Event


def validation(field_errors=None, form_errors=None):
    return {"error": "Validation failed",
            "details": {"formErrors": form_errors or [], "fieldErrors": field_errors or {}}}


# --- /v1/calendars ---------------------------------------------------------------------------------------------


def test_calendar_create_read_update_delete(api, org):
    location = Location.objects.create(organization=org, name="Mission", timezone="America/Los_Angeles")
    body = {"name": "Tables", "location_id": str(location.pk), "timezone": "America/Los_Angeles",
            "slot_minutes": 45, "weekly_hours": [{"day": "mon", "start": "09:00", "end": "12:00"},
                                                 {"day": "mon", "start": "13:00", "end": "24:00"}]}
    created = api.post("/v1/calendars", body, format="json")
    assert created.status_code == 201, created.content
    data = created.json()["data"]
    assert {k: data[k] for k in body} == body
    assert api.get(f"/v1/calendars/{data['id']}").json()["data"] == data
    assert api.get("/v1/calendars").json()["data"] == [data]
    changed = api.patch(f"/v1/calendars/{data['id']}", {"slot_minutes": 30, "location_id": None}, format="json")
    assert (changed.json()["data"]["slot_minutes"], changed.json()["data"]["location_id"]) == (30, None)
    assert api.delete(f"/v1/calendars/{data['id']}").status_code == 204
    assert api.get(f"/v1/calendars/{data['id']}").status_code == 404


@pytest.mark.parametrize(("changes", "errors"), [
    ({"timezone": "Mars/Olympus"}, {"timezone": ["Enter a valid IANA time zone, e.g. America/New_York."]}),
    ({"slot_minutes": 4}, {"slot_minutes": ["Ensure this value is greater than or equal to 5."]}),
    ({"slot_minutes": 481}, {"slot_minutes": ["Ensure this value is less than or equal to 480."]}),
    ({"weekly_hours": [{"day": "mon", "start": "12:00", "end": "09:00"}]},
     {"weekly_hours": ["Item 0: start must be before end."]}),
    ({"weekly_hours": [{"day": "mon", "start": "09:00", "end": "12:00"}, {"day": "mon", "start": "11:00",
                                                                         "end": "13:00"}]},
     {"weekly_hours": ["Items 0 and 1 overlap on mon."]}),
    ({"weekly_hours": [{"day": "funday", "start": "09:00", "end": "12:00"}]},
     {"weekly_hours": ["Item 0: day must be one of mon, tue, wed, thu, fri, sat, sun."]}),
    ({"weekly_hours": [{"day": "mon", "start": "9am", "end": "12:00"}]},
     {"weekly_hours": ["Item 0: start and end must be HH:MM (end may be 24:00)."]}),
    ({"weekly_hours": "mon 9-12"}, {"weekly_hours": ["Expected a list of {day, start, end}."]}),
])
def test_bad_calendars_are_400_and_nothing_is_written(api, changes, errors):
    response = api.post("/v1/calendars", {"name": "Tables", "timezone": "UTC", **changes}, format="json")
    assert (response.status_code, response.json()) == (400, validation(errors))
    assert not Calendar.objects.exists()


def test_a_duplicate_calendar_name_is_409_and_another_orgs_location_404(api, calendar, other_org):
    response = api.post("/v1/calendars", {"name": "Tables", "timezone": "UTC"}, format="json")
    assert (response.status_code, response.json()) == (409, {"error": "conflict", "details": {"field": "name"}})
    theirs = Location.objects.create(organization=other_org, name="Theirs", timezone="UTC")
    response = api.post("/v1/calendars", {"name": "Other", "timezone": "UTC", "location_id": str(theirs.pk)},
                        format="json")
    assert (response.status_code, response.json()) == (404, {"error": "not_found"})
    assert Calendar.objects.count() == 1


def test_a_calendar_with_upcoming_bookings_cannot_be_deleted(api, org, calendar):
    runtime = Runtime(org)
    soon = datetime.now(UTC).replace(hour=14, minute=0, second=0, microsecond=0) + timedelta(days=2)
    assert book(runtime, calendar, soon).status_code == 201
    response = api.delete(f"/v1/calendars/{calendar.pk}")
    assert (response.status_code, response.json()) == (409, {"error": "conflict", "details": {"field": "bookings"}})
    booking = Booking.objects.get()
    assert api.post(f"/v1/bookings/{booking.pk}/cancel").status_code == 200
    assert api.delete(f"/v1/calendars/{calendar.pk}").status_code == 204
    booking.refresh_from_db()
    assert booking.calendar_id is None and booking.status == "canceled"  # the history stays


# --- the runtime: availability and booking ----------------------------------------------------------------------


def test_availability_is_the_weekly_hours_in_the_calendars_zone_across_a_dst_change(org, calendar):
    runtime = Runtime(org)
    # New York leaves daylight time on Sunday 2026-11-01: 09:00 local is 13:00Z on Saturday, 14:00Z on Monday.
    response = runtime.client.get(f"{runtime.prefix}/calendars/{calendar.pk}/availability",
                                  {"from": "2026-10-31T00:00:00Z", "to": "2026-11-03T00:00:00Z"})
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert (data["timezone"], data["slot_minutes"]) == ("America/New_York", 60)
    starts = [slot["start_at"] for slot in data["slots"]]
    assert starts == [
        "2026-10-31T13:00:00.000Z", "2026-10-31T14:00:00.000Z", "2026-10-31T15:00:00.000Z",
        "2026-11-01T14:00:00.000Z", "2026-11-01T15:00:00.000Z", "2026-11-01T16:00:00.000Z",
        "2026-11-02T14:00:00.000Z", "2026-11-02T15:00:00.000Z", "2026-11-02T16:00:00.000Z",
    ]


def test_availability_leaves_out_confirmed_bookings_and_not_canceled_ones(api, org, calendar):
    runtime = Runtime(org)
    assert book(runtime, calendar, MONDAY_1400Z).status_code == 201
    assert book(runtime, calendar, MONDAY_1400Z + timedelta(hours=1)).status_code == 201
    api.post(f"/v1/bookings/{Booking.objects.order_by('start_at').last().pk}/cancel")
    response = runtime.client.get(f"{runtime.prefix}/calendars/{calendar.pk}/availability",
                                  {"from": iso(MONDAY_1400Z), "to": iso(MONDAY_1400Z + timedelta(hours=3))})
    assert [s["start_at"] for s in response.json()["data"]["slots"]] == [
        "2026-11-23T15:00:00.000Z", "2026-11-23T16:00:00.000Z"]


@pytest.mark.parametrize(("params", "errors"), [
    ({"from": "2026-11-23T00:00:00Z"}, {"to": ["This field is required."]}),
    ({"from": "2026-11-23T00:00:00Z", "to": "2026-11-22T00:00:00Z"}, {"to": ["Must be after from."]}),
    ({"from": "2026-11-01T00:00:00Z", "to": "2026-12-23T00:00:00Z"}, {"to": ["The range may span at most 31 days."]}),
    ({"from": "yesterday", "to": "2026-11-22T00:00:00Z"}, None),
    ({"from": "2026-11-23T00:00:00Z", "to": "2026-11-24T00:00:00Z", "colour": "red"},
     {"colour": ["Unknown query parameter."]}),
])
def test_bad_availability_ranges_are_400(org, calendar, params, errors):
    runtime = Runtime(org)
    response = runtime.client.get(f"{runtime.prefix}/calendars/{calendar.pk}/availability", params)
    assert response.status_code == 400
    if errors:
        assert response.json() == validation(errors)


def test_another_orgs_calendar_is_404_for_the_runtime(org, other_org):
    theirs = calendar_create(org=other_org, name="Theirs", timezone_name="UTC", weekly_hours=WEEKDAYS_9_TO_12)
    runtime = Runtime(org)
    response = runtime.client.get(f"{runtime.prefix}/calendars/{theirs.pk}/availability",
                                  {"from": "2026-11-23T00:00:00Z", "to": "2026-11-24T00:00:00Z"})
    assert response.status_code == 404
    assert book(runtime, theirs, MONDAY_1400Z).status_code == 404
    assert not Booking.objects.exists()


def test_a_booking_outside_the_weekly_hours_is_409(org, calendar):
    runtime = Runtime(org)
    response = book(runtime, calendar, MONDAY_1400Z - timedelta(hours=1))  # 08:00 in New York
    assert (response.status_code, response.json()) == (409, {"error": "slot_unavailable",
                                                             "details": {"reason": "outside_hours"}})
    response = book(runtime, calendar, MONDAY_1400Z + timedelta(hours=2), minutes=90)  # runs past 12:00
    assert response.status_code == 409
    assert not Booking.objects.exists() and not Event.objects.filter(type="call.appointment_booked").exists()


def test_an_overlapping_booking_is_409_and_a_canceled_one_frees_the_slot(api, org, calendar):
    runtime = Runtime(org)
    assert book(runtime, calendar, MONDAY_1400Z).status_code == 201
    response = book(runtime, calendar, MONDAY_1400Z + timedelta(minutes=30))
    assert (response.status_code, response.json()) == (409, {"error": "slot_unavailable",
                                                             "details": {"reason": "taken"}})
    assert Booking.objects.count() == 1
    api.post(f"/v1/bookings/{Booking.objects.get().pk}/cancel")
    assert book(runtime, calendar, MONDAY_1400Z + timedelta(minutes=30)).status_code == 201


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_bookings_of_one_slot_one_201_one_409_one_row(org, calendar):
    """Five rounds, each two runtime requests released together at one slot: one books, the other is refused (and
    never a 500: two overlapping inserts racing on the exclusion constraint alone can deadlock)."""
    runtime = Runtime(org)
    for round_ in range(5):
        slot = MONDAY_1400Z + timedelta(days=round_)
        calls = [runtime.start()[0] for _ in range(2)]

        def attempt(index, calls=calls, slot=slot):
            return book(Runtime(org), calendar, slot, call_id=calls[index]).status_code

        results = run_together(lambda: attempt(0), lambda: attempt(1))
        assert sorted(results, key=str) == [201, 409], (round_, results)
        assert Booking.objects.filter(status="confirmed", start_at=slot).count() == 1


# --- /v1/bookings --------------------------------------------------------------------------------------------


def test_bookings_list_filters_get_and_cancel(api, org, calendar):
    runtime = Runtime(org)
    for hours in (0, 1, 2):
        assert book(runtime, calendar, MONDAY_1400Z + timedelta(hours=hours)).status_code == 201
    listed = api.get("/v1/bookings").json()["data"]
    assert [b["start_at"] for b in listed] == ["2026-11-23T16:00:00.000Z", "2026-11-23T15:00:00.000Z",
                                               "2026-11-23T14:00:00.000Z"]
    first = listed[-1]
    assert set(first) == {"id", "call_id", "calendar_id", "location_id", "contact_id", "start_at", "end_at",
                          "timezone", "contact_name", "contact_email", "contact_phone", "status", "created_at",
                          "updated_at"}
    assert first["timezone"] == "America/New_York" and first["contact_name"] == "Ada"
    assert api.get(f"/v1/bookings/{first['id']}").json()["data"] == first
    assert len(api.get("/v1/bookings", {"since": "2026-11-23T15:00:00Z"}).json()["data"]) == 2
    assert len(api.get("/v1/bookings", {"until": "2026-11-23T15:00:00Z"}).json()["data"]) == 2
    assert len(api.get("/v1/bookings", {"calendar_id": str(calendar.pk)}).json()["data"]) == 3

    canceled = api.post(f"/v1/bookings/{first['id']}/cancel")
    assert canceled.status_code == 200 and canceled.json()["data"]["status"] == "canceled"
    again = api.post(f"/v1/bookings/{first['id']}/cancel")
    assert again.status_code == 200 and again.json()["data"] == canceled.json()["data"]  # nothing changed
    assert [b["id"] for b in api.get("/v1/bookings", {"status": "canceled"}).json()["data"]] == [first["id"]]
    assert len(api.get("/v1/bookings", {"status": "confirmed"}).json()["data"]) == 2


def test_bookings_bad_input_and_other_orgs(api, other_api, read_api, org, calendar):
    runtime = Runtime(org)
    book(runtime, calendar, MONDAY_1400Z)
    booking = Booking.objects.get()
    assert api.get("/v1/bookings", {"status": "maybe"}).status_code == 400
    assert api.get("/v1/bookings", {"calendar_id": "x"}).status_code == 400
    assert api.post(f"/v1/bookings/{booking.pk}/cancel", {"reason": "x"}, format="json").status_code == 400
    assert other_api.get(f"/v1/bookings/{booking.pk}").status_code == 404
    assert other_api.post(f"/v1/bookings/{booking.pk}/cancel").status_code == 404
    assert read_api.post(f"/v1/bookings/{booking.pk}/cancel").status_code == 403
    booking.refresh_from_db()
    assert booking.status == "confirmed"


def test_the_booking_list_selector_bounds_start_inclusively_or_before_and_stays_in_the_org(org, other_org, calendar):
    start = MONDAY_1400Z
    rows = [Booking.objects.create(organization=org, calendar=calendar, start_at=start + timedelta(hours=hours),
                                   end_at=start + timedelta(hours=hours, minutes=30), timezone="UTC")
            for hours in (0, 1, 2)]
    other_calendar = calendar_create(org=other_org, name="Theirs")
    Booking.objects.create(organization=other_org, calendar=other_calendar, start_at=start,
                           end_at=start + timedelta(minutes=30), timezone="UTC")
    ids = lambda **filters: sorted(str(b.pk) for b in booking_list(org=org, **filters))  # noqa: E731
    assert ids() == sorted(str(b.pk) for b in rows)
    assert ids(since=rows[1].start_at, until=rows[2].start_at) == sorted(str(b.pk) for b in rows[1:])
    assert ids(since=rows[1].start_at, before=rows[2].start_at) == [str(rows[1].pk)]
    assert ids(calendar_id=other_calendar.pk) == []
