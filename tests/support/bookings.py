"""Calendars' hours and bookings made the way the runtime makes them (an `appointment_booked` event)."""

from datetime import UTC, datetime, timedelta

from calls.models import Booking
from tests.support.runtime import Runtime, iso

WEEKDAYS_9_TO_12 = [{"day": day, "start": "09:00", "end": "12:00"} for day in ("mon", "tue", "wed", "thu", "fri",
                                                                                 "sat", "sun")]
ALL_WEEK = [{"day": day, "start": "00:00", "end": "24:00"} for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")]
MONDAY_1400Z = datetime(2026, 11, 23, 14, 0, tzinfo=UTC)  # 09:00 in New York (EST)


def book(runtime, calendar, start, minutes=60, call_id=None, contact_name="Ada"):
    """The runtime books `calendar` from `start` on a call (a new one unless `call_id`); returns the response."""
    call_id = call_id or runtime.start()[0]
    return runtime.event(call_id, type="appointment_booked", label="Booked", data={
        "calendar_id": str(calendar.pk), "start_at": iso(start), "end_at": iso(start + timedelta(minutes=minutes)),
        "contact_name": contact_name})


def make_booking(org, calendar, start) -> Booking:
    """An hour's booking of `calendar` from `start`, on a new call of `org`; returns the Booking row."""
    runtime = Runtime(org)
    call_id, _ = runtime.start()
    response = book(runtime, calendar, start, call_id=call_id, contact_name="Ada Lovelace")
    assert response.status_code == 201, response.content
    return Booking.objects.get(call=runtime.call(call_id))
