"""Beat tasks of the calls app: closing calls whose completion never came, and folding the analytics rollup."""

from celery import shared_task

from .services.lifecycle import calls_abandon_stale
from .services.rollup import rollup_fold


@shared_task(name="calls.abandon_stale_calls", ignore_result=True)
def abandon_stale_calls() -> int:
    return calls_abandon_stale()


@shared_task(name="calls.fold_rollup", ignore_result=True)
def fold_rollup() -> int:
    """Moves the analytics rollup's deltas into its rows, so that a read adds up few of them (calls 0019). Readers are
    exact whether it ran or not; a period it misses only leaves more deltas for the next."""
    return rollup_fold()
