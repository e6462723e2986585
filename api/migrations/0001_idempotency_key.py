"""The interface layer takes the stored Idempotency-Key answers from orgs (orgs 0016 let go of them). The table keeps
its name (`orgs_idempotencykey`) and every row, column, index and constraint: only Django's state changes."""

import django.db.models.deletion
from django.db import migrations, models

from core.migration_ops import move_content_types


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("orgs", "0016_idempotency_key_in_api"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="IdempotencyKey",
                    fields=[
                        ("id", models.BigAutoField(primary_key=True, serialize=False)),
                        ("key", models.CharField(max_length=255)),
                        ("fingerprint", models.CharField(max_length=80)),
                        ("status_code", models.PositiveSmallIntegerField()),
                        ("body", models.BinaryField()),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("api_key", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                                      to="orgs.apikey")),
                    ],
                    options={
                        "db_table": "orgs_idempotencykey",
                        "indexes": [models.Index(fields=["created_at"], name="idempotency_created")],
                        "constraints": [models.UniqueConstraint(fields=("api_key", "key"), name="uniq_idempotency_key")],
                    },
                ),
            ],
        ),
        move_content_types({"orgs": ["idempotencykey"]}, to="api"),
    ]
