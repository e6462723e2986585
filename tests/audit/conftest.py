from tests.audit.test_api import audit_key, auditor  # noqa: F401 - fixture re-export (the API tests define them)
from tests.support.celery_worker import celery_worker_factory  # noqa: F401 - fixture re-export
