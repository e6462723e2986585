"""A calendar's weekly hours (checked by knowledge.weekly_hours) turned into bookable slots. Pure functions: no
database.

Weekly hours are local wall-clock times in the calendar's IANA time zone (`{"day": "mon", "start": "09:00",
"end": "17:00"}`), so a window at 09:00 stays at 09:00 local across a daylight-saving change and its UTC instant
moves. Slots are real durations stepped from the window's start: a window that a clock change lengthens or
shortens holds one slot more or fewer.
"""

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from knowledge.weekly_hours import DAYS


@dataclass(frozen=True)
class Window:
    day: int  # 0 = Monday
    start: time
    end: time | None  # None: midnight at the end of the day


def windows(weekly_hours: list[dict]) -> list[Window]:
    result = []
    for window in weekly_hours:
        start = time.fromisoformat(window["start"])
        end = None if window["end"] == "24:00" else time.fromisoformat(window["end"])
        result.append(Window(DAYS.index(window["day"]), start, end))
    return result


def _instant(day: date, at: time | None, zone: ZoneInfo) -> datetime:
    """`day` at wall time `at` (None: the midnight that ends the day) in `zone`, as a UTC instant. A wall time in
    a spring-forward gap maps to the instant just as far past the gap; a repeated one to its first occurrence."""
    if at is None:
        day, at = day + timedelta(days=1), time(0, 0)
    return datetime.combine(day, at).replace(tzinfo=zone, fold=0).astimezone(UTC)


def _open_spans(open_windows: list[Window], zone: ZoneInfo, first: date, last: date):
    day = first
    while day <= last:
        for window in open_windows:
            if window.day == day.weekday():
                yield _instant(day, window.start, zone), _instant(day, window.end, zone)
        day += timedelta(days=1)


def slots(weekly_hours: list[dict], *, timezone: str, slot_minutes: int, start: datetime, end: datetime,
          busy: list[tuple[datetime, datetime]] = ()) -> list[tuple[datetime, datetime]]:
    """Every slot of `slot_minutes` (real minutes: a window that a clock change shortens holds fewer) inside the
    weekly hours, within [start, end) and overlapping nothing in `busy`, in time order (UTC)."""
    zone = ZoneInfo(timezone)
    step = timedelta(minutes=slot_minutes)
    found = []
    first = start.astimezone(zone).date() - timedelta(days=1)
    for span_start, span_end in _open_spans(windows(weekly_hours), zone, first, end.astimezone(zone).date()):
        slot_start = span_start
        while slot_start + step <= span_end:
            slot_end = slot_start + step
            if start <= slot_start and slot_end <= end and not any(
                slot_start < busy_end and busy_start < slot_end for busy_start, busy_end in busy
            ):
                found.append((slot_start, slot_end))
            slot_start = slot_end
    return sorted(found)


def within_hours(weekly_hours: list[dict], *, timezone: str, start: datetime, end: datetime) -> bool:
    """Whether [start, end) lies inside one window of the weekly hours."""
    zone = ZoneInfo(timezone)
    day = start.astimezone(zone).date()
    return any(span_start <= start and end <= span_end for span_start, span_end in
               _open_spans(windows(weekly_hours), zone, day - timedelta(days=1), day))
