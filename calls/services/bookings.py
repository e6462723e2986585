"""Bookings: what a calendar can take (its weekly hours, and no overlap with a confirmed booking, which the
database's exclusion constraint enforces under any concurrency), cancelling one, and keeping a calendar with upcoming
bookings from being deleted."""

from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from audit import services as audit
from core.errors import Conflict, NotFound
from core.timefmt import iso_ms
from knowledge.models import Calendar

from .. import availability
from ..errors import SlotUnavailable
from ..models import Booking

OVERLAP_CONSTRAINT = "booking_no_overlap"


def booking_insert(booking: Booking) -> Booking:
    """Saves a new confirmed booking if its calendar can take it, else SlotUnavailable (409). The caller holds the
    transaction; the insert runs in a savepoint so the refusal leaves that transaction usable."""
    # Bookings of one calendar queue on its row: two overlapping inserts checking the exclusion constraint at the
    # same moment would wait on each other (PostgreSQL breaks that as a deadlock); one after the other, the second
    # sees the first and the constraint refuses it cleanly.
    calendar = Calendar.objects.select_for_update(no_key=True).filter(pk=booking.calendar_id).first()
    if calendar is None:
        raise NotFound()
    if not availability.within_hours(calendar.weekly_hours, timezone=calendar.timezone, start=booking.start_at,
                                     end=booking.end_at):
        raise SlotUnavailable("outside_hours")
    try:
        with transaction.atomic():
            booking.save(force_insert=True)
    except IntegrityError as exc:
        if OVERLAP_CONSTRAINT in str(exc):
            raise SlotUnavailable("taken") from None
        raise
    return booking


def busy_spans(calendar: Calendar, start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    return list(
        calendar.bookings.filter(status=Booking.Status.CONFIRMED, start_at__lt=end, end_at__gt=start)
        .values_list("start_at", "end_at")
    )


@transaction.atomic
def booking_cancel(*, booking: Booking) -> tuple[Booking, bool]:
    """Cancels a booking: (booking, canceled_now). Canceling a canceled booking changes nothing."""
    locked = Booking.objects.select_for_update().get(pk=booking.pk)
    if locked.status == Booking.Status.CANCELED:
        return locked, False
    previous = locked.status
    locked.status = Booking.Status.CANCELED
    locked.save(update_fields=["status", "updated_at"])
    audit.record(org=locked.organization_id, action="booking.canceled", target=locked,
                 target_label=f"Booking at {iso_ms(locked.start_at)}", changes={"status": [previous, locked.status]})
    return locked, True


def refuse_calendar_delete_with_upcoming(calendar: Calendar) -> None:
    """Conflict (`details.field` = `bookings`) while the calendar has upcoming confirmed bookings. Registered with
    knowledge.services.delete_guard; runs with the calendar's row locked, so no booking slips in meanwhile
    (booking_insert locks the same row)."""
    if calendar.bookings.filter(status=Booking.Status.CONFIRMED, end_at__gt=timezone.now()).exists():
        raise Conflict("bookings", "This calendar has upcoming confirmed bookings: cancel them first.")
