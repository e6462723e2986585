"""Beat tasks of the calls app: closing calls whose completion never came."""

from celery import shared_task

from .services.lifecycle import calls_abandon_stale


@shared_task(name="calls.abandon_stale_calls", ignore_result=True)
def abandon_stale_calls() -> int:
    return calls_abandon_stale()
