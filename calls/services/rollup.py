"""Folding the calls rollup's deltas into its rows (calls 0019): what the periodic task calls.fold_rollup runs."""

from django.db import connection, transaction

FOLD_BATCH = 10_000


def rollup_fold(*, batch: int = FOLD_BATCH) -> int:
    """Moves every delta committed so far into the folded rows, `batch` per transaction (oldest first), and returns
    how many it moved. The figures read the same before, during and after: each transaction deletes the deltas it
    adds to the folded rows. Another fold at work makes this one return at once (0): it would only wait on the rows
    the other moves. A soft time limit stops it between batches; the next run goes on."""
    moved = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT calls_rollup_fold(%s)", [batch])
            now = cursor.fetchone()[0]
        moved += now
        if now < batch:
            return moved
