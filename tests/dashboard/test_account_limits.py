"""Issue 35, items 8, 10 and 11: how many organizations one account makes; the owner told of a sustained guess
rate; a password reset that does the same work in the request for any address and mails from the worker."""

import re

import pytest
from django.core import mail
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from core import counters
from core.errors import Conflict
from dashboard.attempts import AccountBrake
from notifications.models import EmailNotification
from orgs import services
from orgs.errors import TooManyOrganizations
from orgs.models import Membership, Organization
from tests.factories import UserFactory
from tests.support.accounts import send_account_mail
from tests.support.clients import logged_in
from tests.support.mail import parts, read_mail_files, start_mail_worker, wait_for_mail
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db

STRIP_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')


def _create(client, name):
    return client.post("/organizations/create/", {"name": name})


# --- item 8: organizations per user ---------------------------------------------------------------------------


def test_a_user_in_the_most_organizations_creates_no_other(settings, admin, org):
    settings.ORGS_PER_USER_MAX = 2
    client = logged_in(admin)
    assert _create(client, "Second").status_code == 302
    response = _create(client, "Third")
    assert response.status_code == 409
    assert ("You belong to 2 organizations, the most one account may: leave one before you create another."
            in response.content.decode())
    assert 'data-testid="form-errors"' in response.content.decode()
    assert not Organization.objects.filter(name="Third").exists()
    with pytest.raises(Conflict):
        services.organization_create_for(user=admin, name="Third")
    assert Membership.objects.filter(user=admin).count() == 2


def test_organization_creations_per_user_and_hour(settings, admin):
    settings.ORG_CREATIONS_PER_USER_PER_HOUR = 2
    client = logged_in(admin)
    assert [_create(client, f"New {n}").status_code for n in range(2)] == [302, 302]
    response = _create(client, "One too many")
    assert response.status_code == 429
    assert "You can create at most 2 organizations an hour: try again later." in response.content.decode()
    assert not Organization.objects.filter(name="One too many").exists()
    with pytest.raises(TooManyOrganizations):
        services.organization_create_for(user=admin, name="One too many")
    # Another user is counted apart.
    assert services.organization_create_for(user=UserFactory(), name="Theirs").name == "Theirs"


# --- item 10: the owner told of repeated failed log-ins --------------------------------------------------------


def _fail(email, n):
    return Client(REMOTE_ADDR=f"198.51.100.{n}").post("/login/", {"username": email, "password": "wrong-guess"})


def _locked_rows():
    return list(EmailNotification.objects.filter(kind="account_locked").values_list("to_email", "organization_id"))


def test_repeated_failed_log_ins_mail_the_owner_once_per_window(admin):
    for n in range(AccountBrake.FREE_FAILURES - 1):
        _fail(admin.email, n)
    assert not _locked_rows()
    _fail(admin.email, 9)  # the brake engages
    assert _locked_rows() == [(admin.email, None)]
    brake = AccountBrake("login", admin.email)
    for n in range(10):  # the guessing goes on (each wait over): no second mail within the window
        counters.delete(brake.until_key)
        _fail(admin.email, 20 + n)
    assert _locked_rows() == [(admin.email, None)]
    assert send_account_mail() == ["sent"]
    (message,) = mail.outbox
    assert (message.to, message.subject) == ([admin.email], "Failed log-ins to your Voice Agent account")
    assert (f"Someone tried to log in to the Voice Agent account {admin.email} with a wrong password 5 times within "
            "the hour.") in message.body


def test_the_answers_are_the_same_for_an_account_and_an_unknown_address(admin):
    for n in range(AccountBrake.FREE_FAILURES + 1):
        known, unknown = _fail(admin.email, n), _fail("nobody@example.com", 100 + n)
        assert known.status_code == unknown.status_code
        known_page, unknown_page = (STRIP_CSRF.sub("", r.content.decode()) for r in (known, unknown))
        assert known_page.replace(admin.email, "X") == unknown_page.replace("nobody@example.com", "X")
    assert known.status_code == 429
    assert _locked_rows() == [(admin.email, None)]  # nothing is queued, nor kept, for an address without an account


# --- item 11: password reset through the outbox -----------------------------------------------------------------


def _shapes(queries) -> list[str]:
    """The statements run, without their values: what a known and an unknown address must have in common."""
    shape = lambda sql: re.sub(r"'[^']*'|\b\d+\b|\bs\d+_x\d+\b|\bNULL\b", "?", sql)  # noqa: E731
    return [shape(query["sql"]) for query in queries]


def test_a_reset_request_does_the_same_work_for_a_known_and_an_unknown_address(admin,
                                                                                 django_capture_on_commit_callbacks):
    with CaptureQueriesContext(connection) as known, django_capture_on_commit_callbacks() as known_tasks:
        assert Client(REMOTE_ADDR="192.0.2.1").post("/password-reset/", {"email": admin.email}).status_code == 302
    with CaptureQueriesContext(connection) as unknown, django_capture_on_commit_callbacks() as unknown_tasks:
        assert Client(REMOTE_ADDR="192.0.2.2").post("/password-reset/", {"email": "nobody@example.com"}
                                                    ).status_code == 302
    assert _shapes(known.captured_queries) == _shapes(unknown.captured_queries)
    assert len(known_tasks) == len(unknown_tasks) >= 1
    assert not mail.outbox  # neither request mailed: the worker does
    rows = EmailNotification.objects.filter(kind="password_reset").order_by("created_at")
    assert [(row.to_email, row.organization_id) for row in rows] == [(admin.email, None), ("nobody@example.com", None)]
    assert all("/password-reset/" not in row.body_text for row in rows)  # no usable link at rest
    assert send_account_mail() == ["sent", "dropped"]
    assert not EmailNotification.objects.filter(to_email="nobody@example.com").exists()
    assert [message.to for message in mail.outbox] == [[admin.email]]


@pytest.mark.django_db(transaction=True)
@pytest.mark.xdist_group("notifications-worker")
def test_the_reset_mail_goes_out_from_the_worker(celery_worker_factory, mail_dir, settings):
    user = UserFactory(username="reset@example.com", email="reset@example.com")
    worker = start_mail_worker(celery_worker_factory, mail_dir)
    assert Client().post("/password-reset/", {"email": "Reset@Example.com"}).status_code == 302
    assert Client(REMOTE_ADDR="192.0.2.9").post("/password-reset/", {"email": "nobody@example.com"}
                                                ).status_code == 302
    (message,) = wait_for_mail(mail_dir, 1)
    assert message["To"] == user.email, worker.log()
    text, html = parts(message)
    links = re.findall(rf"{re.escape(settings.DASHBOARD_URL)}/password-reset/[^/\s]+/[^/\s]+/", text)
    assert len(links) == 1 and links[0] in html  # made by the worker, at send time
    assert EmailNotification.objects.get(to_email="reset@example.com").status == "sent"
    wait_until(lambda: not EmailNotification.objects.filter(to_email="nobody@example.com").exists(), 10,
               lambda: "the unknown address's row was not dropped")
    assert len(read_mail_files(mail_dir)) == 1
