"""`GET /healthz` (the process answers: no dependency looked at) and `GET /readyz` (PostgreSQL answers with every
migration applied, Redis answers, the Celery broker answers). Outside /v1: no key, no rate limit, never cached.
Each check is bounded (about half a second), so /readyz answers within a second of a dependency going away.

/readyz is what a load balancer checks, so it is 503 only when this node cannot serve: PostgreSQL unreachable or
migrations missing. Redis and the broker down leave it 200 with `"status": "degraded"` and the failing check named:
the API serves without Redis (counters fall back to the process, the outbox's sweep publishes later), and since
every node shares the same Redis, a 503 for it would take the whole fleet out of rotation at once.

/readyz is anonymous and each answer costs a round trip to PostgreSQL and to Redis (twice): the Redis checks reuse
one small pool of connections per process (a new connection per hit would let a prober fill Redis's connection
table), and each process answers at most READYZ_PER_MINUTE a minute per client address (429 past it). The brake is
counted in the process, not in Redis: it must not depend on what it checks, and probes of several instances from
one address (a node's kubelet) must not share one count."""

import threading
import time

import redis
from django.conf import settings
from django.db import connections
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from kombu import Connection
from redis.backoff import NoBackoff
from redis.retry import Retry

from core import counters
from core.clientaddr import address_bucket, client_address

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


_clients: dict[str, redis.Redis] = {}
_clients_lock = threading.Lock()


def _client(url: str) -> redis.Redis:
    """A kept client per URL, over a pool of at most 4 connections (a 5th concurrent check waits, within TIMEOUT).
    A pooled connection the server dropped (a restart) is retried once on a fresh one, at once; a timeout is not
    retried, so a hung server still costs TIMEOUT."""
    client = _clients.get(url)
    if client is None:
        with _clients_lock:
            client = _clients.get(url)
            if client is None:
                pool = redis.BlockingConnectionPool.from_url(
                    url, max_connections=4, timeout=TIMEOUT, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT,
                    retry=Retry(NoBackoff(), 1, supported_errors=(redis.ConnectionError,)),
                )
                client = _clients[url] = redis.Redis(connection_pool=pool)
    return client


def _ping(url: str) -> None:
    if not _client(url).ping():
        raise RuntimeError("no PONG")


def _redis() -> None:
    if settings.REDIS_SENTINELS:  # the primary Sentinel names now, through the cache's own pool
        if not counters.ping():
            raise RuntimeError("no PONG")
        return
    _ping(settings.CACHES["default"]["LOCATION"])


def _broker() -> None:
    url = settings.CELERY_BROKER_URL
    if url.startswith(("redis://", "rediss://", "unix://")):
        _ping(url)
        return
    with Connection(url, connect_timeout=TIMEOUT, transport_options=settings.CELERY_BROKER_TRANSPORT_OPTIONS) as broker:
        broker.ensure_connection(max_retries=0, timeout=TIMEOUT)


CHECKS = {"database": _database, "redis": _redis, "broker": _broker}
# Without these the node cannot serve at all; the others only degrade it.
REQUIRED = ("database",)


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


class _AddressBrake:
    """Per client address (an IPv6 client per /64), a window opened by the address's first hit and lasting a minute:
    a burst cannot straddle a boundary for twice the limit. Memory is bounded: past MAX_ADDRESSES, closed windows
    are dropped, and if every window is open the oldest half goes."""

    MAX_ADDRESSES = 10_000

    def __init__(self):
        self._windows: dict[str, list[float]] = {}  # address -> [window opened at, hits]
        self._lock = threading.Lock()

    def retry_after(self, address: str, limit: int) -> int:
        """Counts a hit; the whole seconds to wait when past `limit` this window, else 0."""
        now = time.monotonic()
        with self._lock:
            window = self._windows.get(address)
            if window is None or now - window[0] >= 60:
                if len(self._windows) >= self.MAX_ADDRESSES:
                    self._prune(now)
                window = self._windows[address] = [now, 0]
            window[1] += 1
            if window[1] > limit:
                return max(1, int(window[0] + 60 - now + 0.999))
            return 0

    def _prune(self, now: float) -> None:
        self._windows = {a: w for a, w in self._windows.items() if now - w[0] < 60}
        if len(self._windows) >= self.MAX_ADDRESSES:
            newest = sorted(self._windows.items(), key=lambda item: item[1][0])[len(self._windows) // 2:]
            self._windows = dict(newest)

    def clear(self) -> None:
        with self._lock:
            self._windows.clear()


readyz_brake = _AddressBrake()


@never_cache
@require_GET
def readyz(request):
    wait = readyz_brake.retry_after(address_bucket(client_address(request)), settings.READYZ_PER_MINUTE)
    if wait:
        response = JsonResponse({"status": "too_many_requests"}, status=429)
        response["Retry-After"] = str(wait)
        return response
    checks = {name: _run(check) for name, check in CHECKS.items()}
    if not all(checks[name]["ok"] for name in REQUIRED):
        status = "unavailable"
    elif all(check["ok"] for check in checks.values()):
        status = "ready"
    else:
        status = "degraded"
    return JsonResponse({"status": status, "checks": checks}, status=503 if status == "unavailable" else 200)
