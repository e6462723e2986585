"""The delivery history's indexes (docs/webhooks.md#history-at-scale).

- webhooks_delivery_done_created, (created_at, id) of finished deliveries: the retention purge walks it forward in
  batches, each reading its own rows (never a pending one, never the dead rows of earlier batches).
- The single-column b-tree on webhooks_delivery.created_at (OrgOwnedModel's) goes: with 10M rows of history the
  planner took it for a quiet endpoint's delivery-log page (the newest deliveries of every endpoint, filtered),
  and every claim's UPDATE wrote into it.
- The BRIN indexes the purge used go: the purge reads b-trees in order now.

Concurrently, outside a transaction: on a live database the new index is built without blocking writes, and the
drops wait for no lock that would stop the claims.
"""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("orgs", "0011_invitation_locations"),
        ("webhooks", "0012_subscription_fillfactor"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="delivery",
            index=models.Index(
                condition=models.Q(("status", "pending"), _negated=True), fields=["created_at", "id"],
                name="webhooks_delivery_done_created",
            ),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="delivery", name="created_at", field=models.DateTimeField(auto_now_add=True)
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "DROP INDEX CONCURRENTLY IF EXISTS webhooks_delivery_created_at_a0173b39",
                    "CREATE INDEX CONCURRENTLY IF NOT EXISTS webhooks_delivery_created_at_a0173b39"
                    " ON webhooks_delivery (created_at)",
                ),
            ],
        ),
        RemoveIndexConcurrently(model_name="delivery", name="webhooks_delivery_brin_created"),
        RemoveIndexConcurrently(model_name="deliveryattempt", name="webhooks_attempt_brin_created"),
    ]
