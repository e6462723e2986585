"""The alerts tests' locations; their row builders are tests/support/alerts.py."""

import pytest

from knowledge.services import location_create


@pytest.fixture
def main_st(org):
    return location_create(org=org, name="Main St", timezone="America/New_York", address="1 Main St",
                           phone_number="+12125550100")


@pytest.fixture
def harbor(org):
    return location_create(org=org, name="Harbor", timezone="America/New_York", address="2 Harbor Rd",
                           phone_number="+12125550101")
