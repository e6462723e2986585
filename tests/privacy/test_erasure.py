"""Erasure of a caller: POST /v1/privacy/erasure-requests, the worker's deletions, `contact.erased` to the
subscribers with their 2xx in the ledger, the number nowhere afterwards (every text column, event bodies, audit
entries, Redis), suppression of the caller's next calls, another organization untouched, bad input."""

import pytest
import redis
from django.conf import settings
from django.db import connection

from calls.models import Booking, Call, CallbackRequest, Message
from contacts.models import Contact
from knowledge.services import calendar_create
from privacy.models import ErasureRequest, Suppression
from privacy.services import erasure_run
from tests.factories import make_key
from tests.support.clients import key_client
from tests.support.receiver import Receiver
from tests.support.runtime import Runtime, place_call
from tests.support.waiting import wait_until
from tests.support.webhooks import attempt_delivery, make_subscription
from webhooks.models import Delivery, Event

pytestmark = pytest.mark.django_db

NUMBER = "+14155550123"
DIGITS = "4155550123"


@pytest.fixture
def receivers(settings):
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
    with Receiver() as calls_hook, Receiver() as contacts_hook, Receiver() as meetings_hook:
        yield calls_hook, contacts_hook, meetings_hook


def rows_naming(number_digits: str, org) -> list[str]:
    """`table.column` of every row of `org` (or of no organization) whose text holds the digits: every text, json and
    bytea column of every table."""
    hits = []
    with connection.cursor() as cursor:
        cursor.execute("""
            SELECT c.table_name, c.column_name, c.data_type,
                   EXISTS (SELECT 1 FROM information_schema.columns o WHERE o.table_schema = 'public'
                           AND o.table_name = c.table_name AND o.column_name = 'organization_id')
              FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
             WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
               AND c.data_type IN ('text', 'character varying', 'json', 'jsonb', 'bytea', 'ARRAY')""")
        columns = cursor.fetchall()
        for table, column, data_type, has_org in columns:
            value = f"convert_from(\"{column}\", 'UTF8')" if data_type == "bytea" else f"\"{column}\"::text"
            where = f"{value} LIKE %s" + (" AND organization_id = %s" if has_org else "")
            params = [f"%{number_digits}%", org.pk] if has_org else [f"%{number_digits}%"]
            cursor.execute(f'SELECT count(*) FROM "{table}" WHERE {where}', params)  # noqa: S608 - catalog names
            if cursor.fetchone()[0]:
                hits.append(f"{table}.{column}")
    return hits


def redis_naming(number_digits: str) -> list[str]:
    """Keys of the cache's and the broker's Redis whose name or value holds the digits."""
    hits = []
    for url in (settings.CACHE_REDIS_URL, settings.CELERY_BROKER_URL):
        client = redis.Redis.from_url(url)
        for key in client.scan_iter(count=1000):
            kind = client.type(key).decode()
            if kind == "string":
                values = [client.get(key) or b""]
            elif kind == "list":
                values = client.lrange(key, 0, -1)
            elif kind == "hash":
                values = [*client.hkeys(key), *client.hvals(key)]
            elif kind in ("set", "zset"):
                values = list(client.smembers(key)) if kind == "set" else client.zrange(key, 0, -1)
            else:
                values = []
            if number_digits.encode() in key or any(number_digits.encode() in value for value in values):
                hits.append(key.decode(errors="replace"))
    return hits


def test_an_erasure_deletes_the_caller_everywhere_and_the_subscribers_confirm(
        org, other_org, admin, runtime, other_runtime, party_size, receivers, privacy_api):
    calls_hook, contacts_hook, meetings_hook = receivers
    subs = [make_subscription(org, url=calls_hook.url, events=["call.ended"]),
            make_subscription(org, url=contacts_hook.url, events=["contact.created"]),
            make_subscription(org, url=meetings_hook.url, events=["meeting.outcome_approved"])]
    calendar = calendar_create(org=org, name="Tables", timezone_name="UTC",
                               weekly_hours=[{"day": "mon", "start": "00:00", "end": "24:00"}])
    first = place_call(runtime)
    call_id, _ = runtime.start(from_number=NUMBER)
    assert runtime.event(call_id, type="callback_requested", data={
        "requested_window": "asap", "reason": "Call Jordan back about the patio"}).status_code == 201
    assert runtime.event(call_id, type="appointment_booked", data={
        "calendar_id": str(calendar.pk), "start_at": "2030-01-07T10:00:00Z", "end_at": "2030-01-07T10:30:00Z",
        "contact_name": "Jordan Miles"}).status_code == 201
    assert runtime.complete(call_id, outcome="booking", order=None).status_code in (200, 201)
    second = runtime.call(call_id)
    someone_else = place_call(runtime, from_number="+14155550188")
    theirs = place_call(other_runtime, from_number=NUMBER)
    contact = Contact.objects.get(organization=org, phone_number=NUMBER)
    for delivery in Delivery.objects.filter(organization=org):
        attempt_delivery(delivery.pk)  # the subscribers got the caller's data before the erasure
    assert rows_naming(DIGITS, org)

    response = privacy_api.post("/v1/privacy/erasure-requests", {"phone_number": "(415) 555-0123",
                                                                 "suppress": True}, format="json")

    assert response.status_code == 202
    data = response.json()["data"]
    assert data == {"id": data["id"], "status": "pending", "phone_number_masked": "+1•••••••0123",
                    "contact_id": str(contact.pk), "suppress": True, "counts": None, "subscriptions": [],
                    "created_at": data["created_at"], "completed_at": None}

    erasure_run(request_id=data["id"])  # the worker's task (privacy.tasks.run_erasure)

    erased = Event.objects.get(organization=org, type="contact.erased")
    assert erased.data == {"erasure_request_id": data["id"], "contact_id": str(contact.pk),
                           "call_ids": sorted([str(first.pk), str(second.pk)])}
    deliveries = Delivery.objects.filter(event=erased)
    assert {d.subscription_id for d in deliveries} == {subs[0].pk, subs[1].pk}  # those that got call/contact events
    for delivery in deliveries:
        assert attempt_delivery(delivery.pk) == "succeeded"
    assert len(calls_hook.calls) and len(contacts_hook.calls) and meetings_hook.calls == []

    done = privacy_api.get(f"/v1/privacy/erasure-requests/{data['id']}").json()["data"]
    assert (done["status"], done["counts"]) == ("completed", {"calls": 2, "contacts": 1, "bookings": 1,
                                                              "followups": 2})
    assert sorted(s["subscription_id"] for s in done["subscriptions"]) == sorted([str(subs[0].pk), str(subs[1].pk)])
    assert all(s["delivered_at"] for s in done["subscriptions"])
    assert privacy_api.get("/v1/privacy/erasure-requests").json()["data"] == [done]

    # The number, the name and the words: nowhere of this organization's, nor in Redis.
    assert rows_naming(DIGITS, org) == []
    assert redis_naming(DIGITS) == []
    bodies = b"".join(Event.objects.filter(call_id__in=[first.pk, second.pk]).values_list("payload", flat=True))
    assert b"Jordan" not in bodies and b"patio" not in bodies
    assert not Contact.objects.filter(pk=contact.pk).exists()
    for call in (first, second):
        row = Call.objects.get(pk=call.pk)
        assert (row.from_number, row.contact_id, row.content_deleted_reason, row.transcript) == (
            None, None, "erasure", [])
    booking = Booking.objects.get(call=second)
    assert (booking.contact_name, booking.contact_phone, booking.contact_id) == (None, None, None)
    callback = CallbackRequest.objects.get(call=second)
    assert (callback.callback_number, callback.reason) == (None, "")
    assert Message.objects.get(call=first).callback_number is None
    # Another caller of the organization, and the other organization's call from the same number: untouched.
    assert Call.objects.get(pk=someone_else.pk).content_deleted_at is None
    kept = Call.objects.get(pk=theirs.pk)
    assert (kept.from_number, kept.content_deleted_at) == (NUMBER, None)
    assert Contact.objects.filter(organization=other_org, phone_number=NUMBER).exists()

    # Suppressed: the next call from the number keeps nothing, and the runtime is told not to upload.
    call_id, started = runtime.start(from_number=NUMBER)
    assert started.json()["data"]["store_content"] is False
    assert runtime.complete(call_id).status_code in (200, 201)
    assert runtime.upload(call_id).status_code == 201
    later = runtime.call(call_id)
    assert (later.from_number, later.contact_id, later.transcript, later.summary, later.content_deleted_reason) == (
        None, None, [], None, "erasure")
    assert not hasattr(Call.objects.get(pk=later.pk), "recording") or not Call.objects.filter(
        pk=later.pk, recording__isnull=False).exists()
    assert rows_naming(DIGITS, org) == []
    # Another number is stored as ever.
    assert runtime.start(from_number="+14155550177")[1].json()["data"]["store_content"] is True

    # A second run of the task changes nothing.
    assert erasure_run(request_id=data["id"]).status == "completed"
    assert Event.objects.filter(type="contact.erased").count() == 1


def test_suppressions_are_listed_masked_and_can_be_removed(org, runtime, privacy_api):
    request = privacy_api.post("/v1/privacy/erasure-requests", {"phone_number": NUMBER, "suppress": True},
                               format="json").json()["data"]
    listed = privacy_api.get("/v1/privacy/suppressions").json()
    suppression = Suppression.objects.get(organization=org)
    assert listed == {"data": [{"id": str(suppression.pk), "phone_number_masked": "+1•••••••0123",
                                "erasure_request_id": request["id"], "created_at": listed["data"][0]["created_at"]}],
                      "has_more": False, "next_cursor": None}
    assert DIGITS not in suppression.phone_digest
    assert runtime.start(from_number=NUMBER)[1].json()["data"]["store_content"] is False
    response = privacy_api.delete(f"/v1/privacy/suppressions/{suppression.pk}")
    assert (response.status_code, response.content) == (204, b"")
    assert runtime.start(from_number=NUMBER)[1].json()["data"]["store_content"] is True
    again = privacy_api.delete(f"/v1/privacy/suppressions/{suppression.pk}")
    assert (again.status_code, again.json()) == (404, {"error": "not_found"})


def test_an_erasure_by_contact_id(org, runtime, privacy_api, party_size):
    call = place_call(runtime)
    contact = Contact.objects.get(organization=org)
    data = privacy_api.post("/v1/privacy/erasure-requests", {"contact_id": str(contact.pk)},
                            format="json").json()["data"]
    assert (data["contact_id"], data["phone_number_masked"], data["suppress"]) == (str(contact.pk), "+1•••••••0123",
                                                                                  False)
    erasure_run(request_id=data["id"])
    assert Call.objects.get(pk=call.pk).content_deleted_reason == "erasure"
    assert not Suppression.objects.exists()
    assert runtime.start(from_number=NUMBER)[1].json()["data"]["store_content"] is True


@pytest.mark.parametrize(("body", "fields"), [
    ({}, {"phone_number", "contact_id"}),
    ({"phone_number": NUMBER, "contact_id": "00000000-0000-4000-8000-000000000000"}, {"phone_number", "contact_id"}),
    ({"phone_number": "not a number"}, {"phone_number"}),
    ({"phone_number": "+1415"}, {"phone_number"}),
    ({"phone_number": NUMBER, "suppress": "yes"}, {"suppress"}),
])
def test_bad_input_is_400_and_creates_nothing(privacy_api, body, fields):
    response = privacy_api.post("/v1/privacy/erasure-requests", body, format="json")
    assert response.status_code == 400
    assert set(response.json()["details"]["fieldErrors"]) == fields
    assert not ErasureRequest.objects.exists()


def test_an_unknown_or_another_orgs_contact_is_404(other_org, privacy_api):
    theirs = Contact.objects.create(organization=other_org, phone_number=NUMBER, phone_digits=DIGITS, source="api")
    for contact_id in ("00000000-0000-4000-8000-000000000000", str(theirs.pk)):
        response = privacy_api.post("/v1/privacy/erasure-requests", {"contact_id": contact_id}, format="json")
        assert (response.status_code, response.json()) == (404, {"error": "not_found"})
    assert not ErasureRequest.objects.exists()


def test_only_admins_keys_with_the_privacy_scope_reach_erasures(org, admin):
    for scope in ("read_write", "read_write_audit"):
        client = key_client(make_key(org, scope=scope, admin=admin)[1])
        response = client.post("/v1/privacy/erasure-requests", {"phone_number": NUMBER}, format="json")
        assert (response.status_code, response.json()) == (403, {"error": "insufficient_scope",
                                                                 "required": "privacy"})
    reader = key_client(make_key(org, scope="read_privacy", admin=admin)[1])
    assert reader.get("/v1/privacy/erasure-requests").status_code == 200
    assert reader.post("/v1/privacy/erasure-requests", {"phone_number": NUMBER}, format="json").json() == {
        "error": "insufficient_scope", "required": "write"}
    assert not ErasureRequest.objects.exists()
    assert reader.get("/v1/me").json()["data"]["scopes"] == ["read", "privacy"]


@pytest.mark.django_db(transaction=True)
def test_a_worker_on_the_maintenance_queue_completes_the_request(org, admin, celery_worker_factory):
    """End to end: the request's task goes to the `maintenance` queue after commit, and a real worker (consuming it
    as production's does) completes the request."""
    runtime_call = place_call(Runtime(org), recording=False)
    client = key_client(make_key(org, scope="read_write_privacy", admin=admin)[1])
    celery_worker_factory()
    data = client.post("/v1/privacy/erasure-requests", {"phone_number": NUMBER}, format="json").json()["data"]

    def completed():
        return client.get(f"/v1/privacy/erasure-requests/{data['id']}").json()["data"]["status"] == "completed"

    wait_until(completed, 60, "the erasure completed by the worker")
    assert Call.objects.get(pk=runtime_call.pk).content_deleted_reason == "erasure"
