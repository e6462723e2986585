"""Full re-checks in a real Celery worker (POST /v1/audit-events/verifications, polled), one per organization at a
time, and sealing that publishes at most one pending seal per organization however many entries are written."""

import json

import pytest
import redis
from django.conf import settings
from django.db import connection, transaction

from audit import tasks
from audit.models import AuditEvent
from audit.services import record_alone
from orgs.services import organization_update
from tests.factories import make_key
from tests.support.celery_worker import purge_queue
from tests.support.clients import key_client
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def auditor(org, admin):
    """A key with `audit` and `write`: starting a verification is a POST, which needs `write` as every POST."""
    return key_client(make_key(org, scope="read_write_audit", admin=admin, name="Auditor")[1])


def poll(auditor, job_id, timeout=60):
    def finished():
        data = auditor.get(f"/v1/audit-events/verifications/{job_id}").json()["data"]
        return data if data["status"] in ("succeeded", "failed") else None

    return wait_until(finished, timeout, f"verification {job_id} finished")


def test_a_full_verification_runs_in_a_worker_and_is_polled_to_its_result(org, admin, auditor,
                                                                           celery_worker_factory):
    for i in range(5):
        organization_update(org=org, by=admin, name=f"Name {i}")
    started = auditor.post("/v1/audit-events/verifications")
    assert started.status_code == 202
    job = started.json()["data"]
    assert (job["object"], job["status"], job["result"], job["finished_at"]) == ("audit_verification", "queued",
                                                                                    None, None)
    # One per organization at a time: the second is refused and names the one queued.
    second = auditor.post("/v1/audit-events/verifications")
    assert (second.status_code, second.json()) == (
        409, {"error": "conflict", "details": {"field": "verification", "id": job["id"]}})
    celery_worker_factory(purge=False)  # the queued job's task waits on the broker
    done = poll(auditor, job["id"])
    count = AuditEvent.objects.for_org(org).count()
    assert done["status"] == "succeeded"
    assert done["result"] == {"intact": True, "entries_checked": count, "first_broken_id": None}
    assert done["progress"] == {"entries_checked": count, "head_seq": count}
    # Finished: another may start.
    assert auditor.post("/v1/audit-events/verifications").status_code == 202


def test_a_verification_finds_a_change_before_the_checkpoint_and_verify_then_reports_it(
        org, admin, auditor, celery_worker_factory):
    for i in range(4):
        organization_update(org=org, by=admin, name=f"Name {i}")
    assert auditor.get("/v1/audit-events/verify").json()["data"]["intact"] is True  # the checkpoint at the head
    changed = AuditEvent.objects.for_org(org).get(chain_seq=2)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("ALTER TABLE audit_event DISABLE TRIGGER audit_event_append_only")
        cursor.execute("UPDATE audit_event SET changes = '{}' WHERE id = %s", [changed.id])
        cursor.execute("ALTER TABLE audit_event ENABLE TRIGGER audit_event_append_only")
    # A verify request checks only what came after the checkpoint: it cannot see this.
    assert auditor.get("/v1/audit-events/verify").json()["data"]["entries_hashed"] == 0
    celery_worker_factory()
    job = auditor.post("/v1/audit-events/verifications").json()["data"]
    done = poll(auditor, job["id"])
    assert done["result"] == {"intact": False, "entries_checked": 2, "first_broken_id": str(changed.id)}
    # The job moved the checkpoint back before the break: verify requests report it from now on.
    data = auditor.get("/v1/audit-events/verify").json()["data"]
    assert (data["intact"], data["first_broken_id"], data["verified_through_seq"]) == (False, str(changed.id), 1)


def _queued_seals(org_id) -> int:
    """Seal tasks naming the org waiting on the broker's `maintenance` queue."""
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    messages = [json.loads(raw) for raw in client.lrange("maintenance", 0, -1)]
    return sum(1 for message in messages
               if message["headers"]["task"] == "audit.seal_orgs" and str(org_id) in message["headers"]["argsrepr"])


def test_many_writes_leave_at_most_one_pending_seal_per_organization(org, other_org, admin):
    purge_queue()
    for i in range(60):
        for target in (org, other_org):
            record_alone(org=target, action="organization.updated", target=target, changes={"name": [i, i + 1]})
    tasks.publisher.flush()
    wait_until(lambda: _queued_seals(org.pk) and _queued_seals(other_org.pk), 10, "the seals published")
    assert (_queued_seals(org.pk), _queued_seals(other_org.pk)) == (1, 1)
    # The seal clears the org's mark when it starts: a write after it asks for one more, and only one.
    assert tasks.seal_orgs([str(org.pk)]) == 60
    for _ in range(5):
        record_alone(org=org, action="organization.updated", target=org)
    tasks.publisher.flush()
    wait_until(lambda: _queued_seals(org.pk) == 2, 10, "a second seal published")
    assert (_queued_seals(org.pk), _queued_seals(other_org.pk)) == (2, 1)
    purge_queue()
