"""The retention purge's index of the calls that still have content gains `id`: the purge pages by (started_at, id),
and without it the planner took the whole-history index (organization, started_at, id) for the order, whose walk
reads every tombstone of earlier runs again (a second run over 300,000 purged calls read them all to delete nothing).

Concurrently, outside a transaction: on a live database the index is built without blocking the completions' writes.
"""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("calls", "0019_rollup_deltas")]

    operations = [
        AddIndexConcurrently(
            model_name="call",
            index=models.Index(condition=models.Q(("content_deleted_at__isnull", True)),
                               fields=["organization", "started_at", "id"], name="call_content_kept_walk"),
        ),
        RemoveIndexConcurrently(model_name="call", name="call_content_kept_idx"),
    ]
