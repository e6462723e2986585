"""Fixtures of the notification tests: recipients, the runtime client, dashboard clients, a real Celery
worker whose e-mail goes to files, and helpers that read what was sent."""

import email
import email.policy
from pathlib import Path

import pytest

from knowledge.services import team_member_create
from notifications.models import EmailNotification
from notifications.sender import send_notification
from notifications.services import recipient_create
from tests.calls.conftest import Runtime
from tests.factories import MembershipFactory
from tests.support.celery_worker import celery_worker_factory  # noqa: F401 - fixture re-export
from tests.support.waiting import wait_until

SEPARATOR = b"\n" + b"-" * 79 + b"\n"  # what Django's file backend writes after each message


@pytest.fixture(autouse=True)
def _flaky_counter_reset():
    from tests.notifications.backends import FlakyLocmemBackend

    FlakyLocmemBackend.tried = 0


@pytest.fixture
def runtime(org):
    return Runtime(org)


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


def send_pending() -> dict[str, str]:
    """Runs the send task's body for every pending row, as a worker would: {to_email: result}."""
    rows = EmailNotification.objects.filter(status=EmailNotification.Status.PENDING).order_by("to_email")
    return {row.to_email: send_notification(row.pk) for row in rows}


def read_mail_files(folder: Path) -> list[email.message.EmailMessage]:
    """Every message Django's file backend wrote under `folder`."""
    messages = []
    for path in sorted(folder.glob("*.log")):
        for chunk in path.read_bytes().split(SEPARATOR):
            if chunk.strip():
                messages.append(email.message_from_bytes(chunk, policy=email.policy.default))
    return messages


def wait_for_mail(folder: Path, count: int, timeout: float = 20.0) -> list[email.message.EmailMessage]:
    wait_until(lambda: len(read_mail_files(folder)) >= count, timeout,
               lambda: f"{count} messages in {folder}, found {len(read_mail_files(folder))}", interval=0.1)
    return read_mail_files(folder)


def parts(message: email.message.EmailMessage) -> tuple[str, str]:
    """(plain text, HTML) of a message."""
    return (message.get_body(("plain",)).get_content(), message.get_body(("html",)).get_content())
