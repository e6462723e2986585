"""Stored Idempotency-Key answers are encrypted at rest from now on (voiceagent/api/idempotency.py): encrypt the ones
stored in clear before, which may hold a webhook secret shown once."""

from django.db import migrations

from orgs.crypto import encrypt_bytes


def encrypt_stored_answers(apps, schema_editor):
    IdempotencyKey = apps.get_model("orgs", "IdempotencyKey")
    for row in IdempotencyKey.objects.only("id", "body").iterator(chunk_size=500):
        body = bytes(row.body)
        if body[:1] in (b"{", b"["):
            IdempotencyKey.objects.filter(pk=row.pk).update(body=encrypt_bytes(body))


class Migration(migrations.Migration):
    dependencies = [("orgs", "0004_idempotency_keys")]

    operations = [migrations.RunPython(encrypt_stored_answers, migrations.RunPython.noop)]
