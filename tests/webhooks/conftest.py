"""Fixtures of the webhook tests: a loopback HTTP receiver (tests/support/receiver.py); the fake DNS, local URLs
and the Celery worker are tests/conftest.py's."""

import pytest

from tests.support.receiver import Receiver


@pytest.fixture
def receiver():
    with Receiver() as r:
        yield r
