"""Timestamps as the API and events show them: ISO 8601 UTC, milliseconds, `Z`."""

from datetime import UTC, date, datetime


def iso_ms(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# The days a filter or a range may name (query parameters of the API, the dashboard's date filters, exports):
# nothing the platform stores lies outside them, and a day near the calendar's ends (0001-01-05, 9999-12-31) would
# overflow the arithmetic around it (a range's default start, the day after `until`).
EARLIEST_DAY = date(2000, 1, 1)
LATEST_DAY = date(2100, 12, 31)
DAY_RANGE_ERROR = f"Enter a date from {EARLIEST_DAY.isoformat()} to {LATEST_DAY.isoformat()}."


def supported_day(value: date | datetime) -> bool:
    """Whether `value` (a date, or a datetime: its own calendar day) lies within EARLIEST_DAY..LATEST_DAY."""
    day = value.date() if isinstance(value, datetime) else value
    return EARLIEST_DAY <= day <= LATEST_DAY
