"""Settings of a Celery worker started by the notification tests: the test settings, with the e-mail backend
taken from the environment. A worker is a separate process, so Django's locmem outbox there is out of the
test's reach; the tests point it at a file backend in a temporary folder and read the files back."""

import os

from voiceagent.test_settings import *  # noqa: F403
from voiceagent.test_settings import EMAIL_BACKEND as _DEFAULT_BACKEND

EMAIL_BACKEND = os.environ.get("TEST_EMAIL_BACKEND", _DEFAULT_BACKEND)
EMAIL_FILE_PATH = os.environ.get("TEST_EMAIL_FILE_PATH", "")
TEST_EMAIL_FAIL_FIRST = int(os.environ.get("TEST_EMAIL_FAIL_FIRST", "0"))
