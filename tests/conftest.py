"""The fixtures every test directory shares: organizations, their users and keys, `/v1`, dashboard and runtime
clients. Each is a thin wrapper over tests/support (which holds the helpers; nothing imports a conftest)."""

import pytest
from django.core.cache import cache

from core import counters, outbox
from tests.factories import MembershipFactory, OrganizationFactory, make_key
from tests.support.clients import key_client, logged_in
from tests.support.locations import limited_client, make_location
from tests.support.matrix import one_of_each, one_of_each_at
from tests.support.media import media_in
from tests.support.runtime import Runtime
from tests.support.webhooks import FakeDNS

pytest_plugins = ["tests.support.browser", "tests.support.celery_worker"]


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


@pytest.fixture
def api(write_key):
    """A client authenticated with a read+write key of `org`."""
    return key_client(write_key[1])


@pytest.fixture
def read_api(read_key):
    return key_client(read_key[1])


@pytest.fixture
def other_api(other_key):
    return key_client(other_key[1])


@pytest.fixture
def anon_api():
    return key_client(None)


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


@pytest.fixture
def runtime(org):
    """The agent runtime of `org`, through the internal API."""
    return Runtime(org)


@pytest.fixture
def other_runtime(other_org):
    return Runtime(other_org)


@pytest.fixture
def media_in_tmp(settings, tmp_path):
    """Recordings go to a per-test directory, never to var/media."""
    media_in(settings, tmp_path)
    return tmp_path


@pytest.fixture
def mail_dir(tmp_path):
    """A folder for the mail a worker process writes (tests/support/mail.py's start_mail_worker)."""
    folder = tmp_path / "mail"
    folder.mkdir()
    return folder


@pytest.fixture
def l1(org):
    """A location of `org`; with `l2`, the two sides of every location-scope test."""
    return make_location(org, "L1", phone_number="+12125550101")


@pytest.fixture
def l2(org):
    return make_location(org, "L2", phone_number="+12125550102")


@pytest.fixture
def l1_api(org, admin, l1):
    """A `/v1` client whose read+write key of `org` is limited to L1."""
    return limited_client(org, [l1.id], admin=admin, name="L1 key")


@pytest.fixture
def world(org, settings):
    """One of each object the API addresses, all in `org`, deliveries pending (tests/support/matrix.py)."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    return one_of_each(org)


@pytest.fixture
def l2_world(org, l2, settings):
    """One of each object the API addresses, all at L2 (or attached to it only), deliveries pending."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    return one_of_each_at(org, l2)


@pytest.fixture
def fake_dns(monkeypatch):
    """The one DNS edge (webhooks.ssrf.resolve_host) answered by a table a test may add to."""
    dns = FakeDNS()
    monkeypatch.setattr("webhooks.ssrf.resolve_host", dns)
    return dns


@pytest.fixture
def allow_local(settings):
    """Webhook receivers on loopback (the tests' own) are allowed."""
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
