import pytest
from django.test import Client

from tests.factories import MembershipFactory

PASSWORD = "correct-horse-battery"  # tests.factories.UserFactory's password


def logged_in(user) -> Client:
    """A client logged in through the real authentication backend (no force_login)."""
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


@pytest.fixture
def outsider(other_org):
    """An admin of another organization."""
    return MembershipFactory(organization=other_org, role="admin").user


@pytest.fixture
def admin_client(admin):
    return logged_in(admin)


@pytest.fixture
def member_client(member):
    return logged_in(member)


@pytest.fixture
def outsider_client(outsider):
    return logged_in(outsider)
