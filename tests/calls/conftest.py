import pytest

from knowledge.services import calendar_create
from tests.support.bookings import WEEKDAYS_9_TO_12


@pytest.fixture(autouse=True)
def _media_in_tmp(media_in_tmp):
    """Recordings go to a per-test directory, never to var/media."""


@pytest.fixture
def calendar(org):
    """Bookable every day from 9 to 12 in New York, in hour slots."""
    return calendar_create(org=org, name="Tables", timezone_name="America/New_York", slot_minutes=60,
                           weekly_hours=WEEKDAYS_9_TO_12)
