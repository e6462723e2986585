"""Settings, all from the environment (django-environ); a `.env` file is read when present.

`make run` writes `.env` once with generated secrets. PostgreSQL and Redis are the only database and broker:
without DATABASE_URL / REDIS_URL, `make run` and `make test` start embedded ones (scripts/embedded.py), whose
addresses are in var/embedded.env while they run.
"""

import os
import socket
import warnings
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured
from kombu import Exchange, Queue

from voiceagent.storage_url import s3_storage, storage_origins

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()
if not os.environ.get("VOICEAGENT_IGNORE_DOTENV"):  # the test settings set it
    environ.Env.read_env(BASE_DIR / ".env", overwrite=False)
environ.Env.read_env(VAR_DIR / "embedded.env", overwrite=False)  # present only while embedded servers run
# Redis behind Sentinel (README "Redis with Sentinel"): REDIS_SENTINELS=host:port,host:port and
# REDIS_SENTINEL_MASTER name where the cache, the counters and the broker find the primary; REDIS_URL is then unused.
REDIS_SENTINELS = env("REDIS_SENTINELS", default="").strip()
for _name in ("DATABASE_URL", *(() if REDIS_SENTINELS else ("REDIS_URL",))):
    if not env(_name, default=""):
        raise ImproperlyConfigured(
            f"{_name} is not set. `make run` and `make test` start embedded PostgreSQL and Redis themselves; "
            "to run another command against them: `python scripts/embedded.py -- <command>`."
        )

DEBUG = env.bool("DEBUG", default=False)
# What is misconfigured for a start outside DEBUG, collected here and refused once, in one message, at the end.
_PROBLEMS: list[str] = []
# Only DEBUG may fall back to a key from the repository: with it anyone could forge cursors and recording
# links, and webhook secrets would be encrypted under a public key. `make run` writes real ones into `.env`.
SECRET_KEY = env("SECRET_KEY", default="insecure-dev-only-secret-key-change-me-0123456789" if DEBUG else "")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver", "[::1]"])
BASE_URL = env("BASE_URL", default="http://127.0.0.1:8000").rstrip("/")
DASHBOARD_URL = env("DASHBOARD_URL", default=BASE_URL).rstrip("/")
AGENT_RUNTIME_TOKEN = env("AGENT_RUNTIME_TOKEN", default="")
# More tokens the runtime API accepts besides AGENT_RUNTIME_TOKEN, comma-separated: a rotation overlaps old and new.
AGENT_RUNTIME_TOKENS = env.list("AGENT_RUNTIME_TOKENS", default=[])
# The runtime token opens every org's calls and knowledge: outside DEBUG a guessable one refuses to start. (Unset
# is allowed: the runtime API then refuses everything.) `make run` writes one of 43 characters into .env.
MIN_RUNTIME_TOKEN_LENGTH = 32
if not DEBUG and any(
    len(token) < MIN_RUNTIME_TOKEN_LENGTH or len(set(token)) < 10 or any(ch.isspace() for ch in token)
    for token in [AGENT_RUNTIME_TOKEN, *AGENT_RUNTIME_TOKENS]
    if token
):
    _PROBLEMS.append(
        f"AGENT_RUNTIME_TOKEN and every AGENT_RUNTIME_TOKENS entry must be at least {MIN_RUNTIME_TOKEN_LENGTH} "
        "characters of at least 10 different ones, without whitespace, unless DEBUG is on; generate one with "
        "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`."
    )
FIELD_ENCRYPTION_KEY = env("FIELD_ENCRYPTION_KEY", default="")
if not DEBUG and not (SECRET_KEY and FIELD_ENCRYPTION_KEY):
    _PROBLEMS.append(
        "SECRET_KEY and FIELD_ENCRYPTION_KEY must be set (environment or .env) unless DEBUG is on; "
        "`make run` writes both into .env."
    )
WEBHOOK_ALLOW_LOCAL_URLS = env.bool("WEBHOOK_ALLOW_LOCAL_URLS", default=False)
# Local receivers let any org's (test) deliveries reach services inside the network: development only, unless a test
# stack (the suite, the bench) says it runs outside DEBUG on purpose.
if WEBHOOK_ALLOW_LOCAL_URLS and not DEBUG and not env.bool("WEBHOOK_LOCAL_URLS_OUTSIDE_DEBUG", default=False):
    _PROBLEMS.append(
        "WEBHOOK_ALLOW_LOCAL_URLS lets webhook deliveries reach loopback and private addresses (internal services): "
        "turn it off outside DEBUG, or set WEBHOOK_LOCAL_URLS_OUTSIDE_DEBUG=1 too on a test stack."
    )

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "voiceagent",
    "api",
    "orgs",
    "audit",
    "knowledge",
    "contacts",
    "calls",
    "webhooks",
    "meetings",
    "privacy",
    "notifications",
    "alerts",
    "dashboard",
    "devtools",
]

MIDDLEWARE = [
    "voiceagent.middleware.RequestIdMiddleware",
    "voiceagent.middleware.BodySizeLimitMiddleware",
    "voiceagent.middleware.NoCorsMiddleware",
    "voiceagent.middleware.ApiErrorMiddleware",
    "voiceagent.middleware.ContentSecurityPolicyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "voiceagent.browser_middleware.BrowserSessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "voiceagent.browser_middleware.BrowserAuthenticationMiddleware",
    "voiceagent.browser_middleware.LazyMessageMiddleware",
    "voiceagent.browser_middleware.BrowserXFrameOptionsMiddleware",
    "voiceagent.browser_middleware.BrowserHtmxMiddleware",
]

ROOT_URLCONF = "voiceagent.urls"

# Every HTML page: scripts and styles from this origin only, no inline script, no framing. CSP_MEDIA_SRC adds the
# origins recordings play from (an S3 bucket's, when recordings are stored there); an S3-compatible server named by
# RECORDINGS_STORAGE_URL's endpoint_url is added by itself.
_MEDIA_ORIGINS = [*env.list("CSP_MEDIA_SRC", default=[]), *storage_origins(env("RECORDINGS_STORAGE_URL", default=""))]
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    f"media-src 'self' {' '.join(_MEDIA_ORIGINS)}".rstrip() + "; "
    "object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'"
)
WSGI_APPLICATION = "voiceagent.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL")}
# Django's backend plus joined transactions (voiceagent/postgresql/base.py); PostgreSQL is the only database.
DATABASES["default"]["ENGINE"] = "voiceagent.postgresql"
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
# A host that does not answer (a failover that drops packets) fails a connection attempt after this long instead of
# hanging the request: it then answers 503 (core/dbreach.py).
DATABASES["default"].setdefault("OPTIONS", {})
DATABASES["default"]["OPTIONS"].setdefault("connect_timeout", env.int("DATABASE_CONNECT_TIMEOUT", default=5))
# DATABASE_POOLING=transaction: DATABASE_URL names a transaction-mode pooler (PgBouncer, most managed PostgreSQL
# offerings), which hands each transaction to any server connection. Nothing may then outlive a transaction: no
# prepared statement (psycopg's automatic ones stay off, the webhook claim sends its statements' text), no cursor
# held across transactions (Django's server-side cursors off: .iterator() reads in chunks from a client cursor), no
# session setting or lock (the code takes only SET LOCAL and transaction-level advisory locks). Empty: a direct
# connection or a session-mode pool, and nothing changes. docs/deployment.md#postgresql.
DATABASE_POOLING = env("DATABASE_POOLING", default="")
if DATABASE_POOLING not in ("", "session", "transaction"):
    raise ImproperlyConfigured(
        f"DATABASE_POOLING must be empty, 'session' or 'transaction' (the pooler's mode), not {DATABASE_POOLING!r}."
    )
if DATABASE_POOLING == "transaction":
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = None
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL", default="")
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": env("CACHE_REDIS_URL", default=REDIS_URL),
        "KEY_PREFIX": "va",
        # An unreachable or hung Redis costs a request half a second at most, once: core/counters.py then
        # counts in the process for a second before trying again.
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
    }
}
REDIS_SENTINEL_MASTER = env("REDIS_SENTINEL_MASTER", default="")
REDIS_SENTINEL_DB = env.int("REDIS_SENTINEL_DB", default=0)
REDIS_SENTINEL_ADDRESSES: list[tuple[str, int]] = []
if REDIS_SENTINELS:
    from voiceagent.redis_sentinel import parse_sentinels

    # Refused at once, DEBUG or not: a wrong list would leave every process without Redis, and say so only as
    # a stream of connection errors.
    try:
        REDIS_SENTINEL_ADDRESSES = parse_sentinels(REDIS_SENTINELS)
    except ValueError as exc:
        raise ImproperlyConfigured(f"REDIS_SENTINELS cannot be parsed ({exc}): give host:port,host:port.") from None
    if not REDIS_SENTINEL_MASTER:
        raise ImproperlyConfigured("REDIS_SENTINELS is set but REDIS_SENTINEL_MASTER, the monitored primary's name, "
                                   "is not.")
    CACHES["default"].update({
        "BACKEND": "voiceagent.redis_sentinel.SentinelRedisCache",
        "LOCATION": f"sentinel://{REDIS_SENTINEL_MASTER}/{REDIS_SENTINEL_DB}",
        "OPTIONS": {**CACHES["default"]["OPTIONS"], "sentinels": REDIS_SENTINEL_ADDRESSES,
                    "master": REDIS_SENTINEL_MASTER, "db": REDIS_SENTINEL_DB},
    })

AUTH_PASSWORD_VALIDATORS = [
    # Not too close to the account's own address (its local part is the first thing a guesser tries).
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator",
     "OPTIONS": {"user_attributes": ("username", "email", "first_name", "last_name")}},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Where the brakes (log-in, sign-up, reset, invitations) read the client's address (core/clientaddr.py):
# behind N proxies that each append to X-Forwarded-For, TRUSTED_PROXY_COUNT=N; or the proxies' addresses/networks.
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=[])
# The Django admin (/admin/) is mounted only when asked for: it has no brakes of its own.
ADMIN_ENABLED = env.bool("ADMIN_ENABLED", default=False)
LOGIN_URL = "dashboard:login"
LOGIN_REDIRECT_URL = "dashboard:home"
LOGOUT_REDIRECT_URL = "dashboard:login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# Recordings are the default storage's only files. RECORDINGS_STORAGE_URL (voiceagent/storage_url.py) puts them in
# S3-compatible object storage that every node shares; without it they stay on this machine's disk under MEDIA_ROOT,
# and a playback request that reaches another node finds nothing.
MEDIA_ROOT = Path(env("MEDIA_ROOT", default=str(VAR_DIR / "media")))
RECORDINGS_STORAGE_URL = env("RECORDINGS_STORAGE_URL", default="")
if RECORDINGS_STORAGE_URL:
    _RECORDINGS_STORAGE = s3_storage(RECORDINGS_STORAGE_URL, expire_seconds=3600)  # calls.recordings' URL lifetime
else:
    _RECORDINGS_STORAGE = {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": MEDIA_ROOT},
    }
    if not DEBUG:
        warnings.warn(
            "RECORDINGS_STORAGE_URL is not set: recordings are stored on this machine's disk (MEDIA_ROOT), so playback "
            "works only on the node that stored them and a replaced node loses them. With more than one node, set "
            "RECORDINGS_STORAGE_URL=s3://<bucket>?endpoint_url=<url>&region=<region> (docs/deployment.md).",
            UserWarning,
            stacklevel=1,
        )
STORAGES = {
    "default": _RECORDINGS_STORAGE,
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedStaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = True

# Exact body limit (docs/api.md#limits): 4.5 MB, decided before any parsing.
MAX_REQUEST_BODY_BYTES = 4_718_592
MAX_URL_LENGTH = 4096  # path plus query string; longer is 414 `uri_too_long` (docs/api.md#limits)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BODY_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BODY_BYTES

# A kept API key is read from PostgreSQL again at least this often (api/authentication.py): the bound on
# trusting a key whose revocation never reached Redis.
API_KEY_CACHE_SECONDS = env.float("API_KEY_CACHE_SECONDS", default=60)
RATE_LIMIT_READS_PER_MINUTE = env.int("RATE_LIMIT_READS_PER_MINUTE", default=600)
RATE_LIMIT_WRITES_PER_MINUTE = env.int("RATE_LIMIT_WRITES_PER_MINUTE", default=120)
# Per organization, beside the per-key limits (so 50 keys do not get 50 times the limit): 3x the per-key ones by
# default; the tighter of the two applies.
RATE_LIMIT_ORG_READS_PER_MINUTE = env.int("RATE_LIMIT_ORG_READS_PER_MINUTE", default=3 * RATE_LIMIT_READS_PER_MINUTE)
RATE_LIMIT_ORG_WRITES_PER_MINUTE = env.int("RATE_LIMIT_ORG_WRITES_PER_MINUTE",
                                           default=3 * RATE_LIMIT_WRITES_PER_MINUTE)


REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["api.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["api.permissions.HasScope"],
    "DEFAULT_THROTTLE_CLASSES": ["api.throttling.KeyRateThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["api.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["api.parsers.JSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "api.negotiation.AlwaysJSON",
    "URL_FORMAT_OVERRIDE": None,
    "EXCEPTION_HANDLER": "api.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "api.schema.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    "UNAUTHENTICATED_TOKEN": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Voice Agent API",
    # The project's API decisions (docs/api.md) are the description, so /api/docs shows what the schema can't say.
    "DESCRIPTION": (
        "The public REST API of the voice agent. Every request carries `Authorization: Bearer <key>`; "
        "keys are created in the dashboard. Errors are `{\"error\": ..., \"details\"?: ...}`.\n\n"
        + (BASE_DIR / "docs" / "api.md").read_text().split("\n", 1)[1]
    ),
    "VERSION": "v1",
    # 3.1 for the `webhooks` section: the nine events with the catalog's schemas (webhooks/api/openapi.py).
    "OAS_VERSION": "3.1.0",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "webhooks.api.openapi.add_event_webhooks",
        "api.docs.add_request_rules",
        "knowledge.api.escalation_rules.add_rule_conditions",
        "knowledge.api.call_fields.add_call_field_conditions",
        "alerts.api.serializers.add_alert_rule_conditions",
    ],
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "SERVERS": [{"url": BASE_URL}],
    "ENUM_NAME_OVERRIDES": {
        "OrderStatusEnum": "calls.models.OrderStatus",
        "CallStatusEnum": "calls.models.Call.Status",
        "DeliveryStatusEnum": "webhooks.models.Delivery.Status",
        "EventTypeEnum": "webhooks.models.EVENT_TYPES",
        "DestinationTypeEnum": "knowledge.models.EscalationRule.DestinationType",
        "CallFieldTypeEnum": "knowledge.models.CallField.Type",
    },
}

CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL)
# Long enough that no healthy delivery is redelivered; the sweeper covers what dies.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
if REDIS_SENTINELS:
    # kombu's sentinel transport: every (re)connection asks the sentinels for the primary.
    CELERY_BROKER_URL = ";".join(
        f"sentinel://{f'[{host}]' if ':' in host else host}:{port}/{REDIS_SENTINEL_DB}"
        for host, port in REDIS_SENTINEL_ADDRESSES
    )
    CELERY_BROKER_TRANSPORT_OPTIONS.update({
        "master_name": REDIS_SENTINEL_MASTER,
        "sentinel_kwargs": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5},
    })
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# How long a publish may wait for the broker in all (kombu retries within it). A web request publishes after its
# commit: with the broker gone, the first publish waits this long, then the outbox's breaker skips publishing (the
# sweep covers the rows) so the next requests do not wait at all.
CELERY_BROKER_CONNECTION_TIMEOUT = env.float("CELERY_BROKER_CONNECTION_TIMEOUT", default=0.5)
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False  # Django's LOGGING (with request ids) stays in charge
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
# Beat without a state file, safe to run on every machine (voiceagent/beat.py): each entry runs once per period of
# Redis's clock, claimed in Redis, whatever the number of beats; a beat on a fresh machine keeps the schedule.
CELERY_BEAT_SCHEDULER = "voiceagent.beat:ClaimingScheduler"
CELERY_BEAT_SCHEDULE = {}
DAY = 24 * 3600


PERIODIC_EXPIRES_AT_LEAST = 60


def _periodic(name: str, task: str, every: float, *, time_limit: float) -> None:
    """A beat entry every `every` seconds. A run that has not started within its period (or a minute, whichever is
    longer) is dropped (`expires`), so a stopped worker does not come back to a pile of stale sweeps. Celery checks
    an expiry against the worker's own clock: with a second's expiry, a worker whose clock ran 30 s ahead dropped
    every sweep it took, so the minute is what clocks may disagree by. `time_limit` seconds into a run the task is
    told to stop (soft limit: purges stop between batches), and 30 s later its process is killed."""
    CELERY_BEAT_SCHEDULE[name] = {
        "task": task, "schedule": every,
        "options": {"expires": max(every, PERIODIC_EXPIRES_AT_LEAST), "soft_time_limit": time_limit,
                    "time_limit": time_limit + 30},
    }


# Three queues, so a backlog in one never delays the others (README "Queues"): webhook deliveries, notification
# e-mails, and maintenance (the sweeps, the purges, audit sealing; also whatever task names no route). Each is a
# Redis list of its own, and the Procfile runs a worker per queue, so a million queued deliveries neither hold a
# password-reset e-mail back nor starve the sweeps that re-enqueue lost work.
CELERY_TASK_QUEUES = [Queue(name, Exchange(name), routing_key=name) for name in ("deliveries", "email", "maintenance")]
CELERY_TASK_DEFAULT_QUEUE = "maintenance"
CELERY_TASK_ROUTES = {
    "webhooks.deliver_batch": {"queue": "deliveries"},
    "notifications.send": {"queue": "email"},
    "webhooks.sweep": {"queue": "maintenance"},
    "webhooks.purge_delivery_log": {"queue": "maintenance"},
    "notifications.sweep": {"queue": "maintenance"},
    "calls.abandon_stale_calls": {"queue": "maintenance"},
    "alerts.evaluate": {"queue": "maintenance"},
    "calls.fold_rollup": {"queue": "maintenance"},
    "api.purge_idempotency_keys": {"queue": "maintenance"},
    "audit.*": {"queue": "maintenance"},
    "privacy.*": {"queue": "maintenance"},
}

# Webhook delivery (webhooks/conf.py reads these). The retry schedule and timings are injectable for tests.
WEBHOOK_RETRY_SCHEDULE = env.list("WEBHOOK_RETRY_SCHEDULE", cast=float, default=[])  # empty: the standard schedule
WEBHOOK_LEASE_SECONDS = env.float("WEBHOOK_LEASE_SECONDS", default=60)
WEBHOOK_REENQUEUE_AFTER_SECONDS = env.float("WEBHOOK_REENQUEUE_AFTER_SECONDS", default=30)
WEBHOOK_SWEEP_INTERVAL_SECONDS = env.float("WEBHOOK_SWEEP_INTERVAL_SECONDS", default=2)
WEBHOOK_BATCH_SIZE = env.int("WEBHOOK_BATCH_SIZE", default=50)
WEBHOOK_SEND_THREADS = env.int("WEBHOOK_SEND_THREADS", default=32)
WEBHOOK_MAX_IN_FLIGHT = env.int("WEBHOOK_MAX_IN_FLIGHT", default=4)  # per subscription, across every worker
WEBHOOK_CLAIM_AHEAD = env.int("WEBHOOK_CLAIM_AHEAD", default=4)  # a sending run may claim this many times the above
WEBHOOK_ENQUEUE_WINDOW_SECONDS = env.float("WEBHOOK_ENQUEUE_WINDOW_SECONDS", default=0.1)
WEBHOOK_MAX_WAITING_TASKS = env.int("WEBHOOK_MAX_WAITING_TASKS", default=16)  # no publish while this many wait
# The CA certificates webhook endpoints are verified against (a PEM file); empty: certifi's public bundle.
WEBHOOK_CA_BUNDLE = env("WEBHOOK_CA_BUNDLE", default="")
# Per-organization quotas (docs/api.md#quotas): what one tenant may hold of what every tenant shares.
QUOTA_SUBSCRIPTIONS_PER_ORG = env.int("QUOTA_SUBSCRIPTIONS_PER_ORG", default=20)
QUOTA_CALL_FIELDS_PER_ORG = env.int("QUOTA_CALL_FIELDS_PER_ORG", default=100)
QUOTA_API_KEYS_PER_ORG = env.int("QUOTA_API_KEYS_PER_ORG", default=50)  # revoked keys do not count
# Organizations a user may belong to and still create another, and create in any hour: each organization brings
# quotas and shares of the fleet's places of its own, so one account must not multiply them at will.
ORGS_PER_USER_MAX = env.int("ORGS_PER_USER_MAX", default=20)
ORG_CREATIONS_PER_USER_PER_HOUR = env.int("ORG_CREATIONS_PER_USER_PER_HOUR", default=5)
QUOTA_REPLAY_DELIVERIES_PER_HOUR = env.int("QUOTA_REPLAY_DELIVERIES_PER_HOUR", default=100_000)
QUOTA_ALERT_RULES_PER_ORG = env.int("QUOTA_ALERT_RULES_PER_ORG", default=50)
# Test deliveries (webhooks.probe) run in the web request: their three POSTs share this many seconds in all (at
# most 5: docs/webhooks.md#test-deliveries), and at most one web worker in four of each node runs one (at least 1).
WEBHOOK_TEST_BUDGET_SECONDS = min(5.0, env.float("WEBHOOK_TEST_BUDGET_SECONDS", default=5.0))
# CSV exports (core/csvexport.py) hold a web worker for their whole download: at most this many at once per
# organization (fleet-wide), and one web worker in four of each node (at least 1). A download's places expire this
# many seconds after its last progress (a client that stops reading), renewed as it sends.
EXPORTS_PER_ORG_AT_ONCE = env.int("EXPORTS_PER_ORG_AT_ONCE", default=1)
EXPORT_PLACE_TTL_SECONDS = env.float("EXPORT_PLACE_TTL_SECONDS", default=60.0)
# gunicorn's worker count, as gunicorn.conf.py reads it (and as its post_fork hook sets it in every worker, so a
# `--workers` given on the command line counts too).
WEB_WORKERS = env.int("WEB_WORKERS", default=2 * (os.cpu_count() or 1))
# This node's name in the keys of what each node counts for itself (the quarter of its web workers that exports and
# test deliveries may hold): NODE_ID, else the host name and gunicorn's port (gunicorn.conf.py's post_fork sets it),
# else the host name. Two nodes must never share one.
NODE_ID = env("NODE_ID", default="") or socket.gethostname()
# Once more than half of a node's export (or test-delivery) places are held, the rest go only to organizations that
# took or gave back none in this many seconds (docs/api.md#exports): a few tenants cannot hold them all.
PLACES_FAIR_SHARE_SECONDS = env.float("PLACES_FAIR_SHARE_SECONDS", default=60.0)
_periodic("webhooks-sweep", "webhooks.sweep", WEBHOOK_SWEEP_INTERVAL_SECONDS, time_limit=60)
_periodic("webhooks-purge-delivery-log", "webhooks.purge_delivery_log", DAY, time_limit=3600)
# A call the runtime started but never completed is closed as "abandoned" after this long (calls/tasks.py).
CALL_COMPLETION_TIMEOUT_MINUTES = env.int("CALL_COMPLETION_TIMEOUT_MINUTES", default=120)
_periodic("calls-abandon-stale", "calls.abandon_stale_calls", 60, time_limit=60)
# Alert rules are evaluated every minute (alerts/tasks.py), on the maintenance queue.
_periodic("alerts-evaluate", "alerts.evaluate", 60, time_limit=240)  # a first minute opens thousands
# Every call write appends its analytics figures to a delta table (calls 0019); this often they are folded into the
# rollup's rows. Reads add up the deltas not folded yet, so this bounds what a read adds, not whether it is exact.
ROLLUP_FOLD_INTERVAL_SECONDS = env.float("ROLLUP_FOLD_INTERVAL_SECONDS", default=5)
_periodic("calls-fold-rollup", "calls.fold_rollup", ROLLUP_FOLD_INTERVAL_SECONDS, time_limit=60)
_periodic("api-purge-idempotency-keys", "api.purge_idempotency_keys", DAY, time_limit=3600)
# The audit trail (audit/): entries are kept this many days, then purged daily; AUDIT_ENABLED=false only for the
# bench's "audit off" figures. The sweep seals entries whose after-commit publish was lost.
AUDIT_RETENTION_DAYS = env.int("AUDIT_RETENTION_DAYS", default=400)
AUDIT_ENABLED = env.bool("AUDIT_ENABLED", default=True)
# The key the chain's MACs and the signed heads derive from (audit/keys.py); unset, it derives from SECRET_KEY, so
# rotating SECRET_KEY would then fail every earlier entry's check: set it once and keep it (docs/api.md#audit-trail).
AUDIT_CHAIN_KEY = env("AUDIT_CHAIN_KEY", default="")
# `GET /v1/audit-events/verify` hashes at most this many entries per request (past the org's checkpoint); more
# unverified than that and it checks this many, says `complete: false`, and a verification job does the rest.
AUDIT_VERIFY_MAX_ENTRIES = env.int("AUDIT_VERIFY_MAX_ENTRIES", default=10_000)
# A verification job with no progress for this long (its task lost with the broker) no longer blocks a new one.
AUDIT_VERIFICATION_STALE_SECONDS = env.int("AUDIT_VERIFICATION_STALE_SECONDS", default=300)
_periodic("audit-seal-pending", "audit.seal_pending", 10, time_limit=60)
_periodic("audit-purge", "audit.purge", DAY, time_limit=3600)
# Privacy (docs/privacy.md): the daily retention purge (stopped between batches past its limit; the next day goes on)
# and the erasure sweep, on the `maintenance` queue with the other purges.
_periodic("privacy-purge-expired-content", "privacy.purge_expired_content", DAY, time_limit=6 * 3600)
# The retention purge (privacy.services.retention_purge): calls per batch (one short transaction each), and how long
# it rests after each batch, as a multiple of the time the batch took (0: none), so ingestion keeps its latency
# while it runs (docs/privacy.md#retention-and-erasure).
RETENTION_PURGE_BATCH = env.int("RETENTION_PURGE_BATCH", default=500)
RETENTION_PURGE_PAUSE = env.float("RETENTION_PURGE_PAUSE", default=2.0)
_periodic("privacy-sweep-erasures", "privacy.sweep_erasures", 60, time_limit=60)

# Notification e-mails (notifications/conf.py reads these): retries are due times in the database, swept by beat.
NOTIFICATION_RETRY_SCHEDULE = env.list("NOTIFICATION_RETRY_SCHEDULE", cast=float, default=[])  # empty: the default
NOTIFICATION_REENQUEUE_AFTER_SECONDS = env.float("NOTIFICATION_REENQUEUE_AFTER_SECONDS", default=30)
NOTIFICATION_SWEEP_INTERVAL_SECONDS = env.float("NOTIFICATION_SWEEP_INTERVAL_SECONDS", default=5)
_periodic("notifications-sweep", "notifications.sweep", NOTIFICATION_SWEEP_INTERVAL_SECONDS, time_limit=60)
# Celery's Django fixup otherwise closes the DB connection before and after every task (a new PostgreSQL
# connection per webhook delivery, costing more than the delivery; docs/benchmarks.md#figures-behind-the-code);
# tasks call close_old_connections(), which honours CONN_MAX_AGE.
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=1000)

EMAIL_CONFIG = env.email_url("EMAIL_URL", default="consolemail://")
vars().update(EMAIL_CONFIG)
if not DEBUG and EMAIL_CONFIG["EMAIL_BACKEND"].rsplit(".", 2)[-2] in {"console", "locmem", "dummy", "filebased"}:
    _PROBLEMS.append(
        "EMAIL_URL must name a mail server (smtp+tls://user:password@host:587) unless DEBUG is on: console mail "
        "would print password-reset and invitation links into the logs."
    )
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="Voice Agent <no-reply@voiceagent.local>")
# A send holds its outbox row's lock; SMTP must not hang it (Django's default is no timeout at all).
EMAIL_TIMEOUT = env.float("EMAIL_TIMEOUT", default=10)

# GET /metrics answers only with `Authorization: Bearer <METRICS_TOKEN>`; unset, it is off (404).
METRICS_TOKEN = env("METRICS_TOKEN", default="")
MIN_METRICS_TOKEN_LENGTH = 32
if not DEBUG and METRICS_TOKEN and len(METRICS_TOKEN) < MIN_METRICS_TOKEN_LENGTH:
    _PROBLEMS.append(
        f"METRICS_TOKEN must be at least {MIN_METRICS_TOKEN_LENGTH} characters when set, unless DEBUG is on (a short "
        "one can be guessed over the network); generate one with `python -c 'import secrets; "
        "print(secrets.token_urlsafe(32))'`."
    )
# /readyz (anonymous, and each answer costs a PostgreSQL and two Redis round trips) per client address and process.
READYZ_PER_MINUTE = env.int("READYZ_PER_MINUTE", default=120)

# LOG_FORMAT=json: one JSON object per line for the web server, the worker and beat (they share this config).
LOG_FORMAT = env("LOG_FORMAT", default="plain")
# One line per request (route, status, duration, org, key prefix): on with JSON logs unless LOG_REQUESTS says.
LOG_REQUESTS = env.bool("LOG_REQUESTS", default=LOG_FORMAT == "json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "voiceagent.logging.RequestIdFilter"},
        "scrub": {"()": "voiceagent.logging.ScrubFilter"},
    },
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [request_id=%(request_id)s] %(message)s"},
        "json": {"()": "voiceagent.logging.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if LOG_FORMAT == "json" else "plain",
            "filters": ["request_id", "scrub"],
        },
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {
        # Named so that Django's own handlers for it (a console one with DEBUG, mail_admins) are dropped: every
        # line goes through the handler above, redaction included, once.
        "django": {"level": "INFO"},
        "django.server": {"level": "WARNING"},
        # Every sweep tick would log two lines; deliveries log their own outcome in webhooks.
        "celery.app.trace": {"level": "WARNING"},
        "celery.worker.strategy": {"level": "WARNING"},
        "celery.beat": {"level": "WARNING"},
    },
}

SESSION_COOKIE_HTTPONLY = True
# Served over HTTPS in production: cookies only travel encrypted. DEBUG (make run on http://127.0.0.1) relaxes it.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=not DEBUG)
CSRF_COOKIE_HTTPONLY = False
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
# Behind a proxy that terminates TLS (README "Deploying behind a proxy"): trust its X-Forwarded-Proto, redirect plain
# HTTP, and send HSTS. The probes stay reachable over plain HTTP from inside.
if env.bool("BEHIND_TLS_PROXY", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    if not (TRUSTED_PROXY_COUNT or TRUSTED_PROXIES):
        # A warning, not a refusal: it still works, but every client shares the proxy's address in the brakes.
        warnings.warn(
            "BEHIND_TLS_PROXY is on but neither TRUSTED_PROXY_COUNT nor TRUSTED_PROXIES is set: the brakes (log-in, "
            "sign-up, reset, invitation links, /readyz) count every client as the proxy's address, so one client "
            "can brake everyone. Set TRUSTED_PROXY_COUNT to the number of proxies in front.",
            UserWarning,
            stacklevel=1,
        )
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
# HSTS on by default outside DEBUG (a year): a browser that once reached the dashboard over HTTPS never again tries
# plain HTTP, where a network attacker could strip TLS. Django sends it on HTTPS answers only, so plain-HTTP setups
# (make run, the test stack) are unaffected. SECURE_HSTS_SECONDS=0 opts out (a host that may go back to HTTP).
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)

if _PROBLEMS:
    raise ImproperlyConfigured(
        "The service cannot start outside DEBUG until this is fixed:\n" + "\n".join(f"- {p}" for p in _PROBLEMS)
    )
