"""Deliveries, e-mail and maintenance on three Celery queues (settings.CELERY_TASK_ROUTES): every task says which,
each queue is a Redis list of its own, and the queue-length reads (WaitingTasks, /metrics) read the task's own."""

import fnmatch

import pytest
from django.conf import settings

from core.outbox import broker_queue_length, task_queue
from tests.support.celery_worker import RedisServer, use_broker
from voiceagent.celery import app

QUEUES = {"deliveries", "email", "maintenance"}
EXPECTED = {
    "webhooks.deliver_batch": "deliveries",
    "notifications.send": "email",
    "webhooks.sweep": "maintenance",
    "webhooks.purge_delivery_log": "maintenance",
    "notifications.sweep": "maintenance",
    "calls.abandon_stale_calls": "maintenance",
    "api.purge_idempotency_keys": "maintenance",
    "audit.seal_pending": "maintenance",
    "audit.purge": "maintenance",
}


def project_tasks():
    app.loader.import_default_modules()
    return {name: task for name, task in app.tasks.items() if not name.startswith("celery.")}


def test_every_task_is_routed_to_its_queue_by_name():
    tasks = project_tasks()
    assert set(EXPECTED) <= set(tasks)
    for name, task in tasks.items():
        # A new task says where it goes; falling to the default queue by accident is how a slow task ends up
        # beside the e-mails.
        assert any(fnmatch.fnmatchcase(name, pattern) for pattern in settings.CELERY_TASK_ROUTES), name
        assert task_queue(task) in QUEUES, name
        if name in EXPECTED:
            assert task_queue(task) == EXPECTED[name], name
    # Every beat entry's task too (a periodic task only beat publishes is still a maintenance task).
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert task_queue(tasks[entry["task"]]) == "maintenance", entry


def test_each_queue_is_its_own_list_on_the_broker_and_lengths_are_read_per_queue():
    tasks = project_tasks()
    redis = RedisServer().start()
    try:
        with use_broker(redis.url):
            import redis as redis_client

            client = redis_client.Redis.from_url(redis.url)
            tasks["webhooks.deliver_batch"].apply_async(([],), retry=False)
            tasks["webhooks.deliver_batch"].apply_async(([],), retry=False)
            tasks["notifications.send"].apply_async(("00000000-0000-0000-0000-000000000000",), retry=False)
            tasks["webhooks.sweep"].apply_async(retry=False)
            tasks["audit.purge"].apply_async(retry=False)
            tasks["calls.abandon_stale_calls"].apply_async(retry=False)
            assert {name: client.llen(name) for name in QUEUES} == {"deliveries": 2, "email": 1, "maintenance": 3}
            assert client.llen("celery") == 0
            assert broker_queue_length(tasks["webhooks.deliver_batch"]) == 2
            assert broker_queue_length(tasks["notifications.send"]) == 1
            assert broker_queue_length(tasks["webhooks.sweep"]) == 3
    finally:
        redis.stop()


@pytest.mark.django_db
def test_metrics_report_each_queue(client, settings):
    from core import metrics

    settings.METRICS_TOKEN = "m" * 40
    metrics.reset_cache()
    text = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {settings.METRICS_TOKEN}").content.decode()
    for name in QUEUES:
        assert f'voiceagent_celery_queue_length{{queue="{name}"}}' in text
