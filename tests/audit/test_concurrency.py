"""The chain never makes writers of one organization wait for each other: a writer only inserts, and sealing
(after commit, by a worker) takes only what is committed. Real transactions, a real Celery worker."""

import threading
import time

import pytest
from django.db import connection, transaction

from audit.chain import seal, verify
from audit.models import AuditEvent
from audit.services import record
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_writer_holding_its_transaction_open_blocks_neither_another_writer_nor_the_sealer(org):
    inserted, release, failures = threading.Event(), threading.Event(), []

    def slow_writer():
        try:
            with transaction.atomic():
                record(org=org, action="organization.updated", target=org, changes={"name": ["a", "slow"]})
                inserted.set()
                assert release.wait(30)
        except Exception as exc:  # noqa: BLE001 - reported to the test below
            failures.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=slow_writer)
    thread.start()
    assert inserted.wait(30)
    started = time.monotonic()
    with transaction.atomic():
        record(org=org, action="organization.updated", target=org, changes={"name": ["b", "fast"]})
    assert seal(org.pk) == 1  # the committed entry only; the open one is not waited for
    assert time.monotonic() - started < 5
    release.set()
    thread.join(30)
    assert failures == []
    assert seal(org.pk) == 1  # the slow writer's entry, sealed next in the chain
    rows = list(AuditEvent.objects.for_org(org).order_by("chain_seq"))
    assert [row.changes["name"][1] for row in rows] == ["fast", "slow"]
    assert verify(org.pk) == {"intact": True, "entries_checked": 2, "first_broken_id": None}


def test_a_worker_seals_entries_right_after_commit(org, celery_worker_factory):
    celery_worker_factory()
    with transaction.atomic():
        entry = record(org=org, action="organization.updated", target=org)
    wait_until(lambda: AuditEvent.objects.get(pk=entry.pk).hash is not None, 30, "the entry sealed by the worker")
    assert AuditEvent.objects.get(pk=entry.pk).chain_seq == 1
