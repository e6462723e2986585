"""Behind PgBouncer in transaction mode (DATABASE_POOLING=transaction): the API, CSV exports and webhook delivery with
a real worker keep no state on a database session (no PREPARE, no session setting or lock, no cursor held across
transactions). PgBouncer hands each transaction to any of a few server connections, so state one transaction left
would be missing in, or clash with, the next (tests/support/pgbouncer.py)."""

import csv
import http.client
import io
import json
import uuid
from datetime import UTC, datetime

import pytest
from django.db import transaction

from calls.models import Call
from contacts.models import Contact
from tests.support.bulk_calls import insert_calls
from tests.support.gunicorn import running_gunicorn
from tests.support.pgbouncer import pgbouncer, pooled_env  # noqa: F401 - fixture
from tests.support.receiver import Receiver
from tests.support.webhooks import make_subscription
from webhooks.models import Delivery
from webhooks.services import emit

pytestmark = [pytest.mark.pgbouncer, pytest.mark.django_db(transaction=True)]


def _request(port, method, path, plaintext, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body), headers={
            "Authorization": f"Bearer {plaintext}", "Content-Type": "application/json", **(headers or {})})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_the_api_and_exports_work_through_pgbouncer_in_transaction_mode(org, write_key, pgbouncer, tmp_path):  # noqa: F811
    _, plaintext = write_key
    insert_calls(org.pk, 120, newest=datetime.now(tz=UTC))
    env = {**pooled_env(pgbouncer), "WEB_WORKERS": "2"}
    with running_gunicorn(tmp_path / "gunicorn.log", **env) as port:
        for _ in range(6):  # each worker's connection, over the pool's few server connections, several times
            status, body = _request(port, "GET", "/v1/me", plaintext)
            assert status == 200, body
            status, body = _request(port, "GET", "/v1/calls?limit=50", plaintext)
            assert status == 200, body
            page = json.loads(body)
            assert len(page["data"]) == 50 and page["has_more"] is True
            status, body = _request(port, "GET", f"/v1/calls?limit=50&cursor={page['next_cursor']}", plaintext)
            assert status == 200 and len(json.loads(body)["data"]) == 50

        created = []
        for n in range(6):
            key = str(uuid.uuid4())
            contact = {"phone_number": f"+1415200{n:04d}", "name": f"Pooled {n}"}
            first = _request(port, "POST", "/v1/contacts", plaintext, contact, {"Idempotency-Key": key})
            again = _request(port, "POST", "/v1/contacts", plaintext, contact, {"Idempotency-Key": key})
            assert first[0] == 201 and again == first, (first, again)
            created.append(json.loads(first[1])["data"]["id"])
        assert Contact.objects.filter(pk__in=created).count() == 6

        status, body = _request(port, "GET", "/v1/exports/calls.csv", plaintext)
        assert status == 200, body
        rows = list(csv.DictReader(io.StringIO(body.decode())))
        assert sorted(row["id"] for row in rows) == sorted(str(pk) for pk in Call.objects.values_list("pk", flat=True))
        status, body = _request(port, "GET", "/v1/exports/contacts.csv", plaintext)
        assert status == 200 and len(list(csv.DictReader(io.StringIO(body.decode())))) == 6
    assert "ERROR" not in pgbouncer.log(), pgbouncer.log()


FAST = {
    "WEBHOOK_ALLOW_LOCAL_URLS": "1",
    "WEBHOOK_RETRY_SCHEDULE": ",".join(["0.5"] * 9),
    "WEBHOOK_SWEEP_INTERVAL_SECONDS": "0.3",
    "WEBHOOK_REENQUEUE_AFTER_SECONDS": "2",
    "WEBHOOK_LEASE_SECONDS": "10",
}


def test_webhook_claims_and_deliveries_with_a_real_worker_through_pgbouncer_send_each_event_once(
    org, pgbouncer, celery_worker_factory, settings  # noqa: F811
):
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
    flaky_seen = set()

    def first_try_fails(call):  # retries go through the claim again, on another of the pool's sessions
        if call["headers"]["webhook-id"] not in flaky_seen:
            flaky_seen.add(call["headers"]["webhook-id"])
            return 503
        return 200

    with Receiver() as steady, Receiver(status=first_try_fails) as flaky:
        make_subscription(org, url=steady.url)
        make_subscription(org, url=flaky.url)
        worker = celery_worker_factory(concurrency=2, beat=True, env={**FAST, **pooled_env(pgbouncer)})
        events = []
        for n in range(30):
            with transaction.atomic():
                events.append(emit(org=org, type="call.ended", data={"call_id": f"c-{n}"}).id)
        try:
            steady_calls = steady.wait_for(30, timeout=90)
            flaky_calls = flaky.wait_for(60, timeout=90)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{worker.log()[-5000:]}\n{pgbouncer.log()}") from None
    assert sorted(c["headers"]["webhook-id"] for c in steady_calls) == sorted(events)  # each once
    assert sorted(c["headers"]["webhook-id"] for c in flaky_calls) == sorted(events * 2)  # each twice: 503, 200
    assert set(Delivery.objects.values_list("status", flat=True)) == {"succeeded"}
    assert "prepared statement" not in worker.log()


def test_claims_from_several_sessions_share_the_pools_server_connections(org, pgbouncer, settings, monkeypatch):  # noqa: F811
    """Deterministic: PgBouncer gives an idle client the server connection used last, so a second session's first
    claim runs where the first session's ran. A claim that PREPAREd its statements there met them again ("prepared
    statement already exists") or, on another server connection, missed them."""
    from django.db.utils import ConnectionHandler

    from tests.support.database import settings_through
    from webhooks.delivery import claim

    settings.DATABASE_POOLING = "transaction"
    pooled = {**settings_through("127.0.0.1", pgbouncer.port), "DISABLE_SERVER_SIDE_CURSORS": True}
    sessions = [ConnectionHandler({"default": pooled}) for _ in range(3)]
    subscription = make_subscription(org, url="https://hooks.example.com/in")
    with transaction.atomic():
        for n in range(6):
            emit(org=org, type="call.ended", data={"call_id": f"c-{n}"})
    claimed = []
    try:
        for handler in sessions * 2:
            monkeypatch.setattr(claim, "connection", handler["default"])
            _, rows = claim.claim(extra=1)
            claimed += [row[0] for row in rows]
    finally:
        for handler in sessions:
            handler.close_all()
    assert len(claimed) == len(set(claimed)) == 4  # the subscription's in-flight cap, each delivery once
    assert Delivery.objects.filter(subscription=subscription, claim_token__isnull=False).count() == 4
