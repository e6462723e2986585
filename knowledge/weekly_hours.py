"""A calendar's weekly hours: local wall-clock times in the calendar's IANA time zone
(`{"day": "mon", "start": "09:00", "end": "17:00"}`), checked here when a calendar is written. Turning them into
bookable slots is the calls app's (calls.availability)."""

import re

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_HHMM = re.compile(r"^([01][0-9]|2[0-3]):([0-5][0-9])$|^24:00$")
MAX_WINDOWS = 7 * 8


def _minutes(value: str) -> int:
    hours, minutes = value.split(":")
    return int(hours) * 60 + int(minutes)


def weekly_hours_problems(weekly_hours) -> list[str]:
    """Why `weekly_hours` is not a valid list of windows (empty when it is)."""
    if not isinstance(weekly_hours, list):
        return ["Expected a list of {day, start, end}."]
    if len(weekly_hours) > MAX_WINDOWS:
        return [f"Ensure this field has no more than {MAX_WINDOWS} elements."]
    problems, by_day = [], {}
    for position, window in enumerate(weekly_hours):
        if not isinstance(window, dict) or set(window) != {"day", "start", "end"}:
            problems.append(f"Item {position}: expected exactly the keys day, start, end.")
            continue
        day, start, end = window["day"], window["start"], window["end"]
        if day not in DAYS:
            problems.append(f"Item {position}: day must be one of {', '.join(DAYS)}.")
            continue
        if not all(isinstance(v, str) and _HHMM.match(v) for v in (start, end)) or start == "24:00":
            problems.append(f"Item {position}: start and end must be HH:MM (end may be 24:00).")
            continue
        if _minutes(start) >= _minutes(end):
            problems.append(f"Item {position}: start must be before end.")
            continue
        by_day.setdefault(day, []).append((_minutes(start), _minutes(end), position))
    for day, spans in by_day.items():
        spans.sort()
        for (_, previous_end, first), (start, _, second) in zip(spans, spans[1:], strict=False):
            if start < previous_end:
                problems.append(f"Items {first} and {second} overlap on {day}.")
    return problems
