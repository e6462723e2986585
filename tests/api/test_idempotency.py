"""Idempotency-Key on POST and PATCH under /v1: a retry gets the first answer and changes nothing; another request
under the same key is 422; a key in use is 409; errors and 5xx are not kept; auth, scope, rate limit and the header
check come first; answers are kept 24 hours, then purged."""

import threading
import time
from datetime import timedelta

import pytest
import requests
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from api.idempotency import RUNNING, _claim_name, _lock_id
from api.models import IdempotencyKey
from api.tasks import idempotency_keys_purge
from contacts import services
from contacts.models import Contact
from core import counters
from tests.factories import make_key
from tests.support.clients import key_client
from tests.support.database import connect
from webhooks.models import Event

BODY = {"phone_number": "+14155550123", "name": "Ada"}


@pytest.fixture
def redis_down(settings):
    """The cache's Redis unreachable (a closed port): connections are refused at once."""
    settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": "redis://127.0.0.1:1/0"}}
    yield
    counters.reset()


def post(client, key, body=BODY, path="/v1/contacts"):
    return client.post(path, body, format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_a_retried_create_returns_the_same_answer_and_makes_one_row(api, org):
    first = post(api, "create-ada-1")
    assert first.status_code == 201 and "Idempotent-Replayed" not in first
    events = Event.objects.count()
    again = post(api, "create-ada-1")
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert Contact.objects.filter(organization=org).count() == 1
    assert Event.objects.count() == events
    assert again["RateLimit-Limit"]  # still a normal /v1 answer


def test_the_same_key_with_another_request_is_422(api, org):
    post(api, "k-1")
    response = post(api, "k-1", {"phone_number": "+14155550124"})
    assert (response.status_code, response.json()) == (422, {"error": "idempotency_key_reused"})
    other_path = api.patch(f"/v1/contacts/{Contact.objects.get().pk}", {"name": "B"}, format="json",
                           HTTP_IDEMPOTENCY_KEY="k-1")
    assert other_path.status_code == 422
    assert Contact.objects.filter(organization=org).count() == 1


def test_keys_are_per_api_key(api, org, admin):
    _, plaintext = make_key(org, admin=admin, name="Second")
    post(api, "shared")
    second = post(key_client(plaintext), "shared", {"phone_number": "+14155550125"})
    assert second.status_code == 201 and "Idempotent-Replayed" not in second


def test_a_key_claimed_by_a_request_still_running_is_409(api, write_key):
    counters.mark(_claim_name(write_key[0].pk, "busy"), RUNNING, ttl=60)  # the first request, running elsewhere
    response = post(api, "busy")
    assert (response.status_code, response.json()) == (409, {"error": "idempotency_key_in_use"})
    assert not Contact.objects.exists()
    counters.delete(_claim_name(write_key[0].pk, "busy"))  # it failed: its claim is let go
    assert post(api, "busy").status_code == 201


@pytest.mark.django_db(transaction=True)
def test_without_redis_a_key_locked_in_postgresql_is_409(api, write_key, redis_down):
    key_row = write_key[0]
    with connect(autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", [_lock_id(key_row.pk, "busy")])  # the first request, running
        response = post(api, "busy")
        other.execute("SELECT pg_advisory_unlock(%s)", [_lock_id(key_row.pk, "busy")])
    assert (response.status_code, response.json()) == (409, {"error": "idempotency_key_in_use"})
    assert not Contact.objects.exists()
    first = post(api, "busy")
    assert first.status_code == 201
    again = post(api, "busy")
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    assert Contact.objects.count() == 1


def test_a_claim_redis_forgot_still_replays_and_the_retry_changes_nothing(api, org, write_key):
    """A Redis restart forgets claims: the retry runs its handler, finds the stored answer on insert, and rolls its
    own change back. PostgreSQL decides."""
    first = post(api, "forgotten")
    events = Event.objects.count()
    counters.delete(_claim_name(write_key[0].pk, "forgotten"))
    again = post(api, "forgotten")
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert Contact.objects.filter(organization=org).count() == 1 and Event.objects.count() == events
    counters.delete(_claim_name(write_key[0].pk, "forgotten"))
    other = post(api, "forgotten", {"phone_number": "+14155550177"})
    assert other.status_code == 422 and Contact.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_first_request_costs_one_database_round_trip_more(api, org):
    """The claim rides on the request's Redis round trip and the service joins the request's transaction: the
    stored answer's insert is the only extra statement (bench/search_and_idempotency.py measures the same)."""
    assert api.get("/v1/me").status_code == 200  # the key's last use is written now, not in a measured request
    with CaptureQueriesContext(connection) as plain:
        assert api.post("/v1/contacts", BODY, format="json").status_code == 201
    with CaptureQueriesContext(connection) as keyed:
        assert post(api, "counted", {"phone_number": "+14155550150"}).status_code == 201
    statements = [query["sql"] for query in keyed.captured_queries]
    assert len(keyed) == len(plain) + 1, statements
    savepoints = lambda queries: sum("SAVEPOINT" in q["sql"] for q in queries.captured_queries)  # noqa: E731
    assert savepoints(keyed) == savepoints(plain), statements  # the service's own, none for the request's
    assert sum("orgs_idempotencykey" in sql for sql in statements) == 1, statements


def test_a_handler_that_fails_with_500_stores_nothing_and_the_retry_runs(api, org, monkeypatch):
    def broken(**kwargs):
        Contact.objects.create(organization=org, phone_number="+14155550199")  # a half-done change
        raise RuntimeError("boom")

    monkeypatch.setattr("contacts.api.views.services.contact_create", broken)
    failed = post(api, "retry-me")
    assert failed.status_code == 500
    assert not IdempotencyKey.objects.exists() and not Contact.objects.exists()  # rolled back with it
    monkeypatch.undo()
    assert post(api, "retry-me").status_code == 201
    assert Contact.objects.count() == 1


def test_validation_failures_are_not_kept(api):
    bad = post(api, "v-1", {"phone_number": "nope"})
    assert bad.status_code == 400
    assert post(api, "v-1").status_code == 201  # not 422: the failed request recorded nothing


def test_auth_and_scope_failures_come_first(read_api, anon_api):
    assert post(read_api, "s-1").status_code == 403
    assert post(anon_api, "s-1").status_code == 401
    assert not IdempotencyKey.objects.exists()


@pytest.mark.parametrize("value", ["", "x" * 256, "tab\there", "naïve"])
def test_a_malformed_key_is_400(api, value):
    response = api.post("/v1/contacts", BODY, format="json", HTTP_IDEMPOTENCY_KEY=value)
    assert (response.status_code, response.json()) == (400, {"error": "Validation failed", "details": {
        "formErrors": [], "fieldErrors": {"Idempotency-Key": ["Must be 1 to 255 printable ASCII characters."]}}})
    assert not Contact.objects.exists()


def test_patch_is_idempotent_too(api, org):
    contact = Contact.objects.create(organization=org, phone_number="+14155550130")
    first = api.patch(f"/v1/contacts/{contact.pk}", {"name": "Once"}, format="json", HTTP_IDEMPOTENCY_KEY="p-1")
    Contact.objects.filter(pk=contact.pk).update(name="Changed since")
    again = api.patch(f"/v1/contacts/{contact.pk}", {"name": "Once"}, format="json", HTTP_IDEMPOTENCY_KEY="p-1")
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    assert Contact.objects.get(pk=contact.pk).name == "Changed since"  # the replay changed nothing


def test_answers_expire_after_24_hours_and_are_purged(api, org):
    post(api, "old")
    IdempotencyKey.objects.update(created_at=timezone.now() - timedelta(hours=25))
    fresh = post(api, "old", {"phone_number": "+14155550140"})
    assert fresh.status_code == 201 and "Idempotent-Replayed" not in fresh  # an expired key is a new key
    IdempotencyKey.objects.update(created_at=timezone.now() - timedelta(hours=25))
    assert idempotency_keys_purge() == 1 and not IdempotencyKey.objects.exists()


def test_the_schema_documents_the_header_on_every_post_and_patch(client):
    schema = client.get("/api/openapi.json").json()
    for path, item in schema["paths"].items():
        for method in ("post", "patch"):
            if path.startswith("/v1/") and method in item:
                names = [p["name"] for p in item[method].get("parameters", [])]
                assert "Idempotency-Key" in names, f"{method} {path}"


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_requests_with_one_key_one_runs_the_other_is_409(live_server, write_key, org, monkeypatch):
    """Two real HTTP requests on a live server: the first holds the key while its (slowed) handler runs."""
    create = services.contact_create
    started = threading.Event()

    def slow(**kwargs):
        started.set()
        time.sleep(1.0)
        return create(**kwargs)

    monkeypatch.setattr("contacts.api.views.services.contact_create", slow)
    headers = {"Authorization": f"Bearer {write_key[1]}", "Idempotency-Key": "together"}
    results = {}

    def send(name):
        results[name] = requests.post(f"{live_server.url}/v1/contacts", json=BODY, headers=headers, timeout=10)

    first = threading.Thread(target=send, args=("first",))
    first.start()
    assert started.wait(5)
    send("second")
    first.join()
    assert results["first"].status_code == 201
    assert (results["second"].status_code, results["second"].json()) == (409, {"error": "idempotency_key_in_use"})
    assert Contact.objects.filter(organization=org).count() == 1
