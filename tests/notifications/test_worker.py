"""End to end with a real Celery worker: the runtime reports a callback request over HTTP, the service records
it and enqueues the send on commit, and a separate worker process sends the mail.

The worker is its own process, so Django's locmem outbox there is out of our reach: it runs with
tests/support/mail_worker_settings.py, which points EMAIL_BACKEND at a file backend in a temporary folder (the real
`django.core.mail.backends.filebased.EmailBackend`, wrapped by FlakyFileBackend to fail the first N sends like
a dropped SMTP connection). The tests read the files, one per message, and check the outbox rows.
"""

import time

import pytest
from django.db import transaction

from calls.services.tool_events import tool_event_record
from notifications.models import EmailNotification
from tests.support.celery_worker import broker_idle, unacked
from tests.support.mail import CALLBACK, parts, read_mail_files, start_mail_worker, wait_for_mail
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("notifications-worker")]


def all_sent() -> bool:
    return not EmailNotification.objects.exclude(status=EmailNotification.Status.SENT).exists()



def test_a_callback_request_reaches_each_recipient_once_within_seconds(
    celery_worker_factory, mail_dir, runtime, recipients, other_org_recipient, settings
):
    worker = start_mail_worker(celery_worker_factory, mail_dir)
    stale = unacked()  # left by workers earlier tests killed
    call_id, _ = runtime.start()
    started = time.monotonic()
    assert runtime.event(call_id, type="callback_requested", label="Requested a callback",
                         data=CALLBACK).status_code == 201
    messages = wait_for_mail(mail_dir, 2)
    elapsed = time.monotonic() - started
    assert len(messages) == 2, worker.log()
    assert elapsed < 10
    # Nothing more arrives: every row is sent and no task is left that could send again.
    wait_until(lambda: all_sent() and broker_idle(besides=stale), 20, lambda: f"the worker still busy\n{worker.log()}")
    assert len(read_mail_files(mail_dir)) == 2
    assert sorted(m["To"] for m in messages) == ["frontdesk@acme.example", "maria@acme.example"]
    call = runtime.call(call_id)
    link = f"{settings.DASHBOARD_URL}/calls/{call.id}"
    for message in messages:
        text, html = parts(message)
        assert message["Subject"] == "Callback requested: Unknown caller, +14155550177"
        for needle in ["+14155550177", "Evening", CALLBACK["reason"], link]:
            assert needle in text and needle in html, needle
        assert f'href="{link}"' in html
    assert sorted(EmailNotification.objects.values_list("to_email", "status", "attempts")) == [
        ("frontdesk@acme.example", "sent", 1), ("maria@acme.example", "sent", 1),
    ]


def test_an_smtp_failure_is_retried_by_the_sweep_and_each_mail_is_sent_once(
    celery_worker_factory, mail_dir, runtime, recipients
):
    worker = start_mail_worker(celery_worker_factory, mail_dir, fail_first=2, beat=True)  # both first tries fail
    stale = unacked()  # left by workers earlier tests killed
    call_id, _ = runtime.start()
    assert runtime.event(call_id, type="callback_requested", label="Requested a callback",
                         data=CALLBACK).status_code == 201
    messages = wait_for_mail(mail_dir, 2)
    assert len(messages) == 2, worker.log()
    # Three more sweeps sent by the beat and run, and whatever they queued run too: nothing is sent again.
    sweeps = worker.count("beat: sent notifications-sweep")
    wait_until(lambda: worker.count("beat: sent notifications-sweep") >= sweeps + 3 and broker_idle(besides=stale), 30,
               lambda: f"three more sweeps run and the queues empty\n{worker.log()}")
    messages = read_mail_files(mail_dir)
    assert sorted(m["To"] for m in messages) == ["frontdesk@acme.example", "maria@acme.example"]
    assert len({m["X-Notification-Id"] for m in messages}) == 2
    rows = list(EmailNotification.objects.all())
    assert {(r.status, r.attempts) for r in rows} == {("sent", 2)}
    assert all("SMTPServerDisconnected" in r.last_error for r in rows)  # the failure is kept for the log


def test_a_rolled_back_callback_request_sends_nothing(celery_worker_factory, mail_dir, runtime, recipients):
    worker = start_mail_worker(celery_worker_factory, mail_dir)
    stale = unacked()  # left by workers earlier tests killed
    call_id, _ = runtime.start()
    with pytest.raises(RuntimeError), transaction.atomic():
        tool_event_record(org=runtime.org, runtime_call_id=call_id, runtime_event_id="ev-rolled-back",
                          type="callback_requested", data={**CALLBACK, "reason": "ROLLED BACK"})
        raise RuntimeError("the request failed after the callback was recorded")
    # A committed one afterwards: once its mails are in, the worker has drained the queue.
    assert runtime.event(call_id, type="callback_requested", label="Requested a callback",
                         data={**CALLBACK, "reason": "COMMITTED"}).status_code == 201
    wait_for_mail(mail_dir, 2)
    wait_until(lambda: all_sent() and broker_idle(besides=stale), 20, lambda: f"the worker still busy\n{worker.log()}")
    messages = read_mail_files(mail_dir)
    assert len(messages) == 2, worker.log()
    assert all("COMMITTED" in parts(m)[0] and "ROLLED BACK" not in parts(m)[0] for m in messages)
    assert EmailNotification.objects.count() == 2
