"""IANA time zones: the one check the services and the runtime apply (locations, calendars, organizations), and the
one list the dashboard offers."""

from functools import cache
from zoneinfo import available_timezones

from core.errors import ValidationFailed

INVALID_MESSAGE = "Enter a valid IANA time zone, e.g. America/New_York."


@cache
def _names() -> frozenset[str]:
    return frozenset(available_timezones())  # scans tzdata on disk; once per process is enough


def is_timezone(name) -> bool:
    return isinstance(name, str) and name in _names()


def check_timezone(name, *, field: str = "timezone") -> None:
    if not is_timezone(name):
        raise ValidationFailed(field_errors={field: [INVALID_MESSAGE]})


@cache
def timezone_choices() -> list[str]:
    """The names a picker offers, sorted: every zone but the two that name no place."""
    return sorted(_names() - {"Factory", "localtime"})
