"""Beat task of the alerts app: every minute, judge every enabled alert rule (alerts.evaluation)."""

from celery import shared_task
from django.db import close_old_connections

from .evaluation import evaluate as evaluate_rules


@shared_task(name="alerts.evaluate", ignore_result=True, queue="maintenance")
def evaluate() -> dict:
    """Judges every enabled rule at the current minute. Safe with two beats running: an alert opens at most once
    per rule and location (a unique constraint), and resolves once (under its row lock)."""
    close_old_connections()
    return evaluate_rules()
