"""A webhook secret shown once is never kept in clear at rest, not even in the answer stored under an
`Idempotency-Key` (issue 26, item 2): the stored answers are encrypted with the field key, and a retry still gets the
same secret back."""

import base64
import importlib
import json

import pytest
from django.db import connection

from api.models import IdempotencyKey
from orgs.crypto import decrypt_bytes
from tests.support.migrations import apps_at
from webhooks.models import Subscription

pytestmark = pytest.mark.usefixtures("fake_dns")
URL = "https://hooks.example.com/in"


def _table_holds(value: str) -> bool:
    """Whether any column of any stored answer holds `value`: every column as text, binary ones read as text too."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %s",
                       [IdempotencyKey._meta.db_table])
        columns = [f"encode({name}, 'escape')" if kind == "bytea" else f"{name}::text" for name, kind in cursor]
        assert columns
        cursor.execute(f"SELECT count(*) FROM {IdempotencyKey._meta.db_table} WHERE "  # noqa: S608 - names from the catalog
                       + " OR ".join(f"strpos({column}, %s) > 0" for column in columns), [value] * len(columns))
        return cursor.fetchone()[0] > 0


def _secret_forms(secret: str) -> list[str]:
    """The secret as sent, its key without the prefix, and the key's hex (how a bytea would show it)."""
    key = secret.removeprefix("whsec_")
    return [secret, key, base64.b64decode(key).hex()]


def test_create_and_rotate_answers_are_stored_without_the_secret_and_replay_it(api):
    create = {"url": URL, "events": ["call.ended"]}
    created = api.post("/v1/webhook-subscriptions", create, format="json", HTTP_IDEMPOTENCY_KEY="create-1")
    assert created.status_code == 201
    sub_id = created.json()["data"]["id"]
    path = f"/v1/webhook-subscriptions/{sub_id}/rotate-secret"
    rotated = api.post(path, {"grace_period_seconds": 60}, format="json", HTTP_IDEMPOTENCY_KEY="rotate-1")
    assert rotated.status_code == 200
    secrets = [created.json()["secret"], rotated.json()["secret"]]
    assert IdempotencyKey.objects.count() == 2
    for secret in secrets:
        assert not any(_table_holds(form) for form in _secret_forms(secret)), "a secret is stored in clear"

    again = api.post("/v1/webhook-subscriptions", create, format="json", HTTP_IDEMPOTENCY_KEY="create-1")
    assert again["Idempotent-Replayed"] == "true" and again.json() == created.json()
    again = api.post(path, {"grace_period_seconds": 60}, format="json", HTTP_IDEMPOTENCY_KEY="rotate-1")
    assert again["Idempotent-Replayed"] == "true" and again.json() == rotated.json()
    assert Subscription.objects.count() == 1


def test_the_table_search_finds_a_secret_stored_in_clear(api):
    """Guards the test above: the same search finds a secret in an answer stored as before (plain JSON)."""
    created = api.post("/v1/webhook-subscriptions", {"url": URL, "events": ["call.ended"]}, format="json",
                       HTTP_IDEMPOTENCY_KEY="create-1")
    IdempotencyKey.objects.update(body=json.dumps(created.json()).encode())
    assert _table_holds(created.json()["secret"])


def test_an_answer_stored_in_clear_before_the_encryption_still_replays(api):
    """A rolling deploy: a process older than the encryption stored this answer in clear."""
    create = {"url": URL, "events": ["call.ended"]}
    created = api.post("/v1/webhook-subscriptions", create, format="json", HTTP_IDEMPOTENCY_KEY="create-1")
    IdempotencyKey.objects.update(body=json.dumps(created.json()).encode())
    again = api.post("/v1/webhook-subscriptions", create, format="json", HTTP_IDEMPOTENCY_KEY="create-1")
    assert again["Idempotent-Replayed"] == "true" and again.json() == created.json()


def test_the_stored_answer_is_the_field_keys_ciphertext(api):
    api.post("/v1/contacts", {"phone_number": "+14155550123"}, format="json", HTTP_IDEMPOTENCY_KEY="c-1")
    body = bytes(IdempotencyKey.objects.get().body)
    assert b"+14155550123" not in body
    assert json.loads(decrypt_bytes(body))["data"]["phone_number"] == "+14155550123"


def test_the_migration_encrypts_answers_stored_in_clear(api):
    migration = importlib.import_module("orgs.migrations.0005_idempotency_answers_encrypted")
    create = {"url": URL, "events": ["call.ended"]}
    created = api.post("/v1/webhook-subscriptions", create, format="json", HTTP_IDEMPOTENCY_KEY="create-1")
    IdempotencyKey.objects.update(body=json.dumps(created.json()).encode())
    migration.encrypt_stored_answers(apps_at([("orgs", "0005_idempotency_answers_encrypted")]), None)  # in orgs then
    assert not _table_holds(created.json()["secret"])
    again = api.post("/v1/webhook-subscriptions", create, format="json", HTTP_IDEMPOTENCY_KEY="create-1")
    assert again["Idempotent-Replayed"] == "true" and again.json() == created.json()
