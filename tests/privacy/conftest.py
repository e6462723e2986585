import pytest

from knowledge.services import call_field_create
from tests.support.clients import org_client
from tests.support.locations import make_location


@pytest.fixture(autouse=True)
def _media_in_tmp(media_in_tmp):
    """Recordings go to a per-test directory (tmp_path), whose files a test can look for."""


@pytest.fixture
def privacy_api(org, admin):
    return org_client(org, "read_write_privacy", admin=admin)


@pytest.fixture
def party_size(org):
    return call_field_create(org=org, name="party_size", label="Party size", type="number")


@pytest.fixture
def locations(org):
    return [make_location(org, "North", phone_number="+12125550101"),
            make_location(org, "South", phone_number="+12125550102")]
