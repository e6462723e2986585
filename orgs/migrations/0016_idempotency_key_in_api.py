"""Stored Idempotency-Key answers belong to the interface layer (api 0001 takes the model): only Django's state
changes here; the table `orgs_idempotencykey` and every row stay."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [("orgs", "0015_idempotency_fingerprint_keyed")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[migrations.DeleteModel(name="IdempotencyKey")],
        ),
    ]
