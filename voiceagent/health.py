"""`GET /healthz` (the process answers: no dependency looked at) and `GET /readyz` (PostgreSQL answers with every
migration applied, Redis answers, the Celery broker answers). Outside /v1: no key, no rate limit, never cached.
Each check is bounded (about half a second), so /readyz turns 503 within a second of a dependency going away."""

import time

import redis
from django.conf import settings
from django.db import connections
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from kombu import Connection

TIMEOUT = 0.5
DATABASE = "default"
_migrated = set()  # aliases seen fully migrated: migrations are not unapplied under a running process


def _database() -> None:
    connection = connections[DATABASE]
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    if DATABASE not in _migrated:
        if MigrationExecutor(connection).migration_plan(MigrationExecutor(connection).loader.graph.leaf_nodes()):
            raise RuntimeError("migrations not applied")
        _migrated.add(DATABASE)


def _ping(url: str) -> None:
    client = redis.Redis.from_url(url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT)
    try:
        if not client.ping():
            raise RuntimeError("no PONG")
    finally:
        client.close()


def _redis() -> None:
    _ping(settings.CACHES["default"]["LOCATION"])


def _broker() -> None:
    url = settings.CELERY_BROKER_URL
    if url.startswith(("redis://", "rediss://", "unix://")):
        _ping(url)
        return
    with Connection(url, connect_timeout=TIMEOUT) as broker:
        broker.ensure_connection(max_retries=0, timeout=TIMEOUT)


CHECKS = {"database": _database, "redis": _redis, "broker": _broker}


def _run(check) -> dict:
    started = time.perf_counter()
    try:
        check()
        error = None
    except Exception as exc:  # noqa: BLE001 - any failure means not ready; its kind is reported, never a secret
        error = type(exc).__name__
        if check is _database:
            connections[DATABASE].close()  # a broken connection must not be reused by the next check
    result = {"ok": error is None, "ms": round((time.perf_counter() - started) * 1000, 1)}
    if error:
        result["error"] = error
    return result


@never_cache
@require_GET
def healthz(request):
    return JsonResponse({"status": "ok"})


@never_cache
@require_GET
def readyz(request):
    checks = {name: _run(check) for name, check in CHECKS.items()}
    ready = all(check["ok"] for check in checks.values())
    return JsonResponse({"status": "ready" if ready else "unavailable", "checks": checks}, status=200 if ready else 503)
