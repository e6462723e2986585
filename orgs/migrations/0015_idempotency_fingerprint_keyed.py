"""Stored Idempotency-Key records keep a keyed fingerprint from now on (orgs.crypto.keyed_fingerprint): key the bare
SHA-256 digests stored before, so none of them outlives the migration (their retries still replay: the keyed form is
an HMAC of that same digest). Widening a varchar rewrites nothing."""

from django.db import migrations, models

from orgs.crypto import KEYED, keyed_fingerprint


def key_stored_fingerprints(apps, schema_editor):
    IdempotencyKey = apps.get_model("orgs", "IdempotencyKey")
    bare = IdempotencyKey.objects.exclude(fingerprint__startswith=KEYED).only("id", "fingerprint")
    for row in bare.iterator(chunk_size=500):
        IdempotencyKey.objects.filter(pk=row.pk, fingerprint=row.fingerprint).update(
            fingerprint=keyed_fingerprint(row.fingerprint))


class Migration(migrations.Migration):
    dependencies = [("orgs", "0014_location")]

    operations = [
        migrations.AlterField(model_name="idempotencykey", name="fingerprint", field=models.CharField(max_length=80)),
        migrations.RunPython(key_stored_fingerprints, migrations.RunPython.noop),
    ]
