"""The line watchdog (`line_silent`): the calls a location expects in the window come from the same weekday and local
hour of the last four weeks, counted only while it was open; it fires when at least `min_calls` were expected and
none came. The clock is the test's (`evaluate(now=...)`), across the end of daylight saving time in New York
(2026-11-01: UTC-4 before, UTC-5 after)."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from alerts.evaluation import evaluate
from alerts.models import Alert
from alerts.services import alert_rule_create
from knowledge.services import location_create
from tests.support.alerts import MINUTE, call_at
from webhooks.models import Event
from webhooks.services import subscription_create

pytestmark = pytest.mark.django_db

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
NINE_TO_FIVE = [{"day": day, "start": "09:00", "end": "17:00"} for day in WEEKDAYS]
# Wednesday 2026-11-04, 10:30 in New York (EST, UTC-5), three days after the change.
NOW = datetime.fromisoformat("2026-11-04T15:30:00+00:00")


def local(text: str) -> datetime:
    """A New York wall-clock time as the instant it was (EDT before 2026-11-01, EST after)."""
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo("America/New_York"))


@pytest.fixture
def shop(org):
    return location_create(org=org, name="Shop", timezone="America/New_York", address="1 Main St",
                           phone_number="+12125550100", weekly_hours=NINE_TO_FIVE)


def silent_rule(org, shop, **extra):
    values = {"name": "Shop line", "metric": "line_silent", "window_minutes": 60, "min_calls": 1,
              "location_ids": [shop.pk], "channels": ["webhook"], **extra}
    return alert_rule_create(org=org, **values)


def past_wednesdays(clock: str) -> list[datetime]:
    """The last four Wednesdays at this local time: October 28, 21, 14, 7 (all EDT)."""
    return [local(f"2026-10-{day:02d}T{clock}") for day in (28, 21, 14, 7)]


def test_fires_from_the_same_local_hour_of_the_last_four_weeks_across_the_dst_change(org, shop):
    subscription_create(org=org, url="https://hooks.example.com/ops", events=["location.line_silent"],
                        location_ids=[shop.pk])
    rule = silent_rule(org, shop)
    for when in past_wednesdays("10:10"):  # 14:10Z: a same-UTC-instant shift (15:30Z - 1 week) would miss them
        call_at(org, when, location=shop)
        call_at(org, when + 5 * MINUTE, location=shop)
    assert evaluate(now=NOW)["fired"] == 1
    alert = Alert.objects.get(rule=rule)
    assert (alert.location_id, alert.value, alert.threshold, alert.triggered_at) == (shop.pk, 0.0, 2.0, NOW)
    (event,) = Event.objects.filter(type="location.line_silent")
    assert event.location_id == shop.pk
    assert event.data == {"alert_id": str(alert.pk), "rule_id": str(rule.pk), "location_id": str(shop.pk),
                          "expected_calls": 2.0, "window_minutes": 60, "silent_since": "2026-11-04T14:30:00.000Z"}


def test_a_call_in_the_window_keeps_it_quiet_and_then_resolves(org, shop):
    rule = silent_rule(org, shop)
    for when in past_wednesdays("10:10"):
        call_at(org, when, location=shop)
    call_at(org, local("2026-11-04T10:05"), location=shop)
    assert evaluate(now=NOW)["fired"] == 0
    assert not Alert.objects.filter(rule=rule).exists()


def test_calls_expected_while_closed_do_not_count(org, shop):
    silent_rule(org, shop, window_minutes=90)
    for when in past_wednesdays("08:10"):  # before opening: not expected
        call_at(org, when, location=shop)
        call_at(org, when, location=shop)
    assert evaluate(now=local("2026-11-04T09:30"))["fired"] == 0
    assert not Alert.objects.exists()


def test_only_during_open_hours_it_stays_quiet_while_closed(org, shop):
    silent_rule(org, shop, only_during_open_hours=True, window_minutes=60)
    for when in past_wednesdays("16:40"):
        call_at(org, when, location=shop)
    # 17:30 local: the window 16:30-17:30 expected one call (16:40, open then), but the shop is closed now.
    assert evaluate(now=local("2026-11-04T17:30"))["fired"] == 0
    assert evaluate(now=local("2026-11-04T16:59"))["fired"] == 1


def test_fewer_expected_than_min_calls_does_not_fire(org, shop):
    silent_rule(org, shop, min_calls=3)
    for when in past_wednesdays("10:10"):
        call_at(org, when, location=shop)
        call_at(org, when, location=shop)
    assert evaluate(now=NOW)["fired"] == 0
    call_at(org, past_wednesdays("10:20")[0], location=shop)
    call_at(org, past_wednesdays("10:20")[1], location=shop)
    call_at(org, past_wednesdays("10:20")[2], location=shop)
    call_at(org, past_wednesdays("10:20")[3], location=shop)
    assert evaluate(now=NOW)["fired"] == 1  # (2 + 1) x 4 / 4 = 3 expected


def test_an_organization_wide_watchdog_watches_each_location(org, shop):
    quiet = location_create(org=org, name="Quiet", timezone="Europe/Paris", address="2 Rue",
                            phone_number="+33140000000")
    alert_rule_create(org=org, name="Every line", metric="line_silent", window_minutes=60, min_calls=1, channels=[])
    for when in past_wednesdays("10:10"):
        call_at(org, when, location=shop)
    assert evaluate(now=NOW)["fired"] == 1
    assert [a.location_id for a in Alert.objects.all()] == [shop.pk]
    assert quiet.pk not in [a.location_id for a in Alert.objects.all()]


def test_it_fires_within_two_minutes_of_the_expected_call_not_coming(org, shop):
    """The drill of the bench's claim: calls every Wednesday at 10:10 and 10:25; this Wednesday none comes. With a
    15-minute window the watchdog judges each minute; it fires at the first minute whose window expected a call."""
    silent_rule(org, shop, window_minutes=15)
    for when in past_wednesdays("10:10"):
        call_at(org, when, location=shop)
    fired_at = None
    minute = local("2026-11-04T10:00")
    while minute <= local("2026-11-04T10:30"):
        if evaluate(now=minute)["fired"]:
            fired_at = minute
            break
        minute += MINUTE
    # The window ending at 10:11 is the first to hold 10:10 of the past weeks.
    assert fired_at is not None and fired_at - local("2026-11-04T10:10") <= timedelta(minutes=2)


def test_it_resolves_a_window_after_a_call_comes_and_keeps_its_cooldown(org, shop):
    rule = silent_rule(org, shop, window_minutes=15, cooldown_minutes=60)
    for clock in ("10:05", "10:20", "10:35", "10:50"):
        for when in past_wednesdays(clock):
            call_at(org, when, location=shop)
    assert evaluate(now=NOW)["fired"] == 1  # 10:30, nothing since 10:15 while 10:20 was expected
    call_at(org, local("2026-11-04T10:31"), location=shop)
    call_at(org, local("2026-11-04T10:40"), location=shop)
    assert evaluate(now=local("2026-11-04T10:32"))["resolved"] == 0  # back, not yet for a window
    assert evaluate(now=local("2026-11-04T10:46"))["resolved"] == 0
    assert evaluate(now=local("2026-11-04T10:47"))["resolved"] == 1
    assert Alert.objects.get(rule=rule).resolved_at == local("2026-11-04T10:47")
    # Silent again at 11:05 (10:50 expected, nothing since 10:40), but within the hour's cooldown: no second alert.
    assert evaluate(now=local("2026-11-04T11:05"))["fired"] == 0
    for when in past_wednesdays("11:25"):
        call_at(org, when, location=shop)
    assert evaluate(now=local("2026-11-04T11:31"))["fired"] == 1  # after the cooldown
    assert Alert.objects.filter(rule=rule).count() == 2
