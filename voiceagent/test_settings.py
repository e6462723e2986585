"""Settings for the test suite: the real settings, with per-xdist-worker isolation of Redis.

Each pytest-xdist worker (gw0, gw1, ...) gets its own Redis databases for the cache and the Celery
broker, so `cache.clear()` in one worker never touches another's counters or queued tasks.
"""

import os

# A developer's `.env` (written by `make run`) must not change what the tests see; workers inherit this.
os.environ["VOICEAGENT_IGNORE_DOTENV"] = "1"
# Set before the real settings load, which refuse to start without them outside DEBUG.
os.environ.setdefault("SECRET_KEY", "test-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz")
os.environ.setdefault("FIELD_ENCRYPTION_KEY", "yJ2Qv3o0m4m9wq0kq9v1m2XH3s5Vb7Yt8Zr6Pq4Lw1A=")
os.environ.setdefault("EMAIL_URL", "smtp://127.0.0.1:1025")  # never used: the tests' backend is locmem (below)
# The suite (and the servers and workers it starts) runs outside DEBUG with loopback receivers on purpose.
os.environ.setdefault("WEBHOOK_LOCAL_URLS_OUTSIDE_DEBUG", "1")

import warnings  # noqa: E402

# One machine, on purpose: the start-up warning about recordings on the local disk would only repeat in every process.
warnings.filterwarnings("ignore", message="RECORDINGS_STORAGE_URL is not set", category=UserWarning)

from .settings import *  # noqa: E402, F403
from .settings import CACHES, REDIS_SENTINELS, REDIS_URL, VAR_DIR  # noqa: E402

VAR_DIR.mkdir(parents=True, exist_ok=True)

WORKER = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
WORKER_NUMBER = int(WORKER.removeprefix("gw") or 0)


def _redis_db(url: str, db: int) -> str:
    base = url.rsplit("/", 1)[0] if url.count("/") > 2 else url.rstrip("/")
    return f"{base}/{db}"


if REDIS_SENTINELS:  # a test's own Redis behind Sentinel (tests/ops/test_redis_failover.py): used as it is
    CACHES = {"default": {**CACHES["default"], "KEY_PREFIX": ""}}
else:
    CACHE_REDIS_URL = _redis_db(REDIS_URL, 1 + WORKER_NUMBER * 2)
    CACHES = {"default": {**CACHES["default"], "LOCATION": CACHE_REDIS_URL, "KEY_PREFIX": ""}}
    CELERY_BROKER_URL = _redis_db(REDIS_URL, 2 + WORKER_NUMBER * 2)

SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = False  # the live server and the browser tests speak plain HTTP
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
AGENT_RUNTIME_TOKEN = "test-agent-runtime-token-0123456789abcdef"
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
ROOT_URLCONF = "tests.urls"
