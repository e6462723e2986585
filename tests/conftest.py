import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from core import counters, outbox
from tests.factories import MembershipFactory, OrganizationFactory, make_key
from tests.support.clients import logged_in

pytest_plugins = ["tests.support.browser"]


@pytest.fixture(autouse=True)
def _clean_cache():
    # Rate-limit counters live in the cache; each test starts from zero (each xdist worker has its own Redis db),
    # and so does the per-process fallback a Redis outage leaves behind.
    cache.clear()
    counters.reset()
    outbox.reset_breakers()
    yield
    counters.reset()
    outbox.reset_breakers()


@pytest.fixture
def org(db):
    return OrganizationFactory(name="Acme Pizza")


@pytest.fixture
def other_org(db):
    return OrganizationFactory(name="Other Org")


@pytest.fixture
def admin(org):
    return MembershipFactory(organization=org, role="admin").user


@pytest.fixture
def member(org):
    return MembershipFactory(organization=org, role="member").user


@pytest.fixture
def write_key(org, admin):
    return make_key(org, scope="read_write", admin=admin, name="Write key")


@pytest.fixture
def read_key(org, admin):
    return make_key(org, scope="read", admin=admin, name="Read key")


@pytest.fixture
def other_key(other_org):
    return make_key(other_org, scope="read_write", name="Other key")


def _client(plaintext: str | None) -> APIClient:
    client = APIClient()
    if plaintext:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    return client


@pytest.fixture
def api(write_key):
    """A client authenticated with a read+write key of `org`."""
    return _client(write_key[1])


@pytest.fixture
def read_api(read_key):
    return _client(read_key[1])


@pytest.fixture
def other_api(other_key):
    return _client(other_key[1])


@pytest.fixture
def anon_api():
    return _client(None)


@pytest.fixture
def outsider(other_org):
    """An admin of another organization."""
    return MembershipFactory(organization=other_org, role="admin").user


@pytest.fixture
def admin_client(admin):
    """The dashboard as `org`'s admin."""
    return logged_in(admin)


@pytest.fixture
def member_client(member):
    return logged_in(member)


@pytest.fixture
def outsider_client(outsider):
    return logged_in(outsider)
