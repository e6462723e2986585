"""Fixtures of the notification tests: recipients of each kind (the helpers that read what was sent, and the
Celery worker whose mail goes to files, are tests/support/mail.py's)."""

import pytest

from knowledge.services import team_member_create
from notifications.services import recipient_create
from tests.factories import MembershipFactory
from tests.support.mail_backends import FlakyLocmemBackend


@pytest.fixture(autouse=True)
def _flaky_counter_reset():
    FlakyLocmemBackend.tried = 0


@pytest.fixture
def maria(org):
    return team_member_create(org=org, name="Maria Lopez", role="Manager", email="maria@acme.example")


@pytest.fixture
def sam(org):
    return team_member_create(org=org, name="Sam Chen", role="Chef", email="sam@acme.example")


@pytest.fixture
def recipients(org, admin, maria):
    """Maria (a team member) and the front desk (a plain address) get callback requests; Maria gets escalations,
    the front desk gets messages."""
    return [
        recipient_create(org=org, by=admin, team_member=maria, callback_requests=True, escalations=True),
        recipient_create(org=org, by=admin, email="frontdesk@acme.example", callback_requests=True, messages=True),
    ]


@pytest.fixture
def other_org_recipient(other_org):
    admin = MembershipFactory(organization=other_org, role="admin").user
    return recipient_create(org=other_org, by=admin, email="them@other.example", callback_requests=True,
                            messages=True, escalations=True, webhook_problems=True)
