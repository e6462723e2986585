"""A backlog on one queue never delays another: with a thousand delivery tasks queued ahead of it, a callback
request's e-mail is sent within seconds by a worker that consumes every queue (the test workers' default, the
harder case: the Procfile gives each queue workers of its own), while most of the backlog is still waiting."""

import time

import pytest

from tests.support.celery_worker import purge_queue
from tests.support.mail import CALLBACK, start_mail_worker, wait_for_mail
from webhooks.tasks import deliver_batch

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("notifications-worker")]

BACKLOG = 1000


def test_an_email_is_not_delayed_by_a_backlog_of_deliveries(celery_worker_factory, mail_dir, runtime,
                                                             recipients):
    import redis as redis_client
    from django.conf import settings

    purge_queue()
    broker = redis_client.Redis.from_url(settings.CELERY_BROKER_URL)
    with deliver_batch.app.producer_or_acquire() as producer:
        for _ in range(BACKLOG):
            deliver_batch.apply_async(([],), retry=False, producer=producer)
    worker = start_mail_worker(celery_worker_factory, mail_dir, purge=False)
    assert broker.llen("deliveries") > BACKLOG * 0.9, worker.log()
    call_id, _ = runtime.start()
    started = time.monotonic()
    assert runtime.event(call_id, type="callback_requested", label="Requested a callback",
                         data=CALLBACK).status_code == 201
    messages = wait_for_mail(mail_dir, 2, timeout=30)
    elapsed = time.monotonic() - started
    left = broker.llen("deliveries")
    print(f"e-mails sent {elapsed:.2f} s after the request, {left} of {BACKLOG} delivery tasks still queued")
    assert len(messages) == 2, worker.log()
    # Behind the backlog in one queue the mail would have waited for most of it to drain.
    assert left > BACKLOG / 2
    assert elapsed < 10
