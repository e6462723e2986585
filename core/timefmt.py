"""Timestamps as the API and events show them: ISO 8601 UTC, milliseconds, `Z`."""

from datetime import UTC, datetime


def iso_ms(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
