from tests.support.celery_worker import celery_worker_factory  # noqa: F401 - fixture re-export
