"""Stored Idempotency-Key answers moving from orgs to the interface layer (orgs 0016, api 0001) is Django state only:
run forward on a database holding an answer, it keeps the row and every column, index and constraint of its table,
and a retry after the move still replays the answer."""

import pytest
from django.contrib.contenttypes.models import ContentType

from api.models import IdempotencyKey
from tests.support.migrations import graph, migrate, schema

MOVE = [("orgs", "0016_idempotency_key_in_api"), ("api", "0001_idempotency_key")]
TABLES = ["orgs_idempotencykey"]


@pytest.mark.django_db(transaction=True)
def test_the_move_keeps_every_answer_and_the_table_definition():
    leaves = graph().leaf_nodes()
    apps = migrate([("orgs", "0015_idempotency_fingerprint_keyed"), ("api", None)])
    org = apps.get_model("orgs", "Organization").objects.create(name="Old Pizza")
    key = apps.get_model("orgs", "ApiKey").objects.create(organization=org, name="CRM", key_prefix="va_live_abcd",
                                                          key_digest="x" * 64)
    ContentType.objects.get_or_create(app_label="orgs", model="idempotencykey")
    stored = apps.get_model("orgs", "IdempotencyKey").objects.create(
        api_key=key, key="retry-1", fingerprint="k1:" + "f" * 64, status_code=201, body=b"sealed answer")
    schema_before = schema(TABLES)

    migrate(MOVE)
    assert schema(TABLES) == schema_before
    migrate(leaves)
    moved = IdempotencyKey.objects.get(pk=stored.pk)
    assert (moved.api_key_id, moved.key, moved.fingerprint, moved.status_code, bytes(moved.body)) == (
        key.pk, "retry-1", "k1:" + "f" * 64, 201, b"sealed answer")
    assert ContentType.objects.get_for_model(IdempotencyKey).app_label == "api"
    assert not ContentType.objects.filter(app_label="orgs", model="idempotencykey").exists()
