"""Settings for the test suite: the real settings, with per-xdist-worker isolation of Redis and SQLite.

Each pytest-xdist worker (gw0, gw1, ...) gets its own Redis databases for the cache and the Celery
broker, so `cache.clear()` in one worker never touches another's counters or queued tasks.
"""

import os
from pathlib import Path

# A developer's `.env` (written by `make run`) must not change what the tests see; workers inherit this.
os.environ["VOICEAGENT_IGNORE_DOTENV"] = "1"
# Set before the real settings load, which refuse to start without them outside DEBUG.
os.environ.setdefault("SECRET_KEY", "test-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz")
os.environ.setdefault("FIELD_ENCRYPTION_KEY", "yJ2Qv3o0m4m9wq0kq9v1m2XH3s5Vb7Yt8Zr6Pq4Lw1A=")

from .settings import *  # noqa: E402, F403
from .settings import DATABASES, REDIS_URL  # noqa: E402
from .settings import VAR_DIR as _BASE_VAR_DIR  # noqa: E402

# TEST_VAR_DIR gives one checkout's concurrent test runs separate SQLite files and file-system brokers.
VAR_DIR = Path(os.environ.get("TEST_VAR_DIR") or _BASE_VAR_DIR)
VAR_DIR.mkdir(parents=True, exist_ok=True)

WORKER = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
WORKER_NUMBER = int(WORKER.removeprefix("gw") or 0)


def _redis_db(url: str, db: int) -> str:
    base = url.rsplit("/", 1)[0] if url.count("/") > 2 else url.rstrip("/")
    return f"{base}/{db}"


if REDIS_URL:
    CACHE_REDIS_URL = _redis_db(REDIS_URL, 1 + WORKER_NUMBER * 2)
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_REDIS_URL}
    }
    CELERY_BROKER_URL = _redis_db(REDIS_URL, 2 + WORKER_NUMBER * 2)
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    CELERY_BROKER_URL = "filesystem://"
    _broker_dir = VAR_DIR / "test-broker" / WORKER
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "out"),
        "data_folder_out": str(_broker_dir / "out"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
        "polling_interval": 0.1,  # the default 1 s poll makes Celery-worker tests crawl on the file broker
    }

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not memory, so that Celery workers started by tests see the same database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-{WORKER}.sqlite3")}

SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = False  # the live server and the browser tests speak plain HTTP
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
AGENT_RUNTIME_TOKEN = "test-agent-runtime-token-0123456789abcdef"
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
ROOT_URLCONF = "tests.urls"
