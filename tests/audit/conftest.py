import pytest

from tests.factories import make_key
from tests.support.clients import key_client


@pytest.fixture
def audit_key(org, admin):
    return make_key(org, scope="read_audit", admin=admin, name="Auditor")


@pytest.fixture
def auditor(audit_key):
    """A `/v1` client with a read+audit key of `org`."""
    return key_client(audit_key[1])
