"""`EmailNotification.call` becomes a plain `call_id` (notifications sit below calls: no relation points up). The
column, its values and its index stay; only the foreign key constraint goes."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("calls", "0001_initial"),
        ("notifications", "0005_alerts_kind_and_recipient_locations"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.AlterField(
                    model_name="emailnotification", name="call",
                    field=models.ForeignKey(to="calls.call", on_delete=django.db.models.deletion.SET_NULL, null=True,
                                            blank=True, related_name="+", db_constraint=False),
                ),
            ],
            state_operations=[
                migrations.RemoveField(model_name="emailnotification", name="call"),
                migrations.AddField(model_name="emailnotification", name="call_id",
                                    field=models.UUIDField(blank=True, db_index=True, null=True)),
            ],
        ),
    ]
