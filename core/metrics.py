"""`GET /metrics` in the Prometheus text format, behind `METRICS_TOKEN` (off, 404, when unset).

Per process, counted by the request middleware: requests by route, method and status, and their latency. Knowledge
reads are the requests of the runtime's knowledge route. With several gunicorn workers set PROMETHEUS_MULTIPROC_DIR
(prometheus-client's multiprocess mode) so a scrape sums them.

From the database and the broker at scrape time (cheap indexed reads, cached 5 seconds): the gauges the apps register
from their `AppConfig.ready()` through `register_gauges` (webhooks: the outbox's depth, the delivery lag, recent
attempts by result, disabled subscriptions; notifications: the e-mail outbox's depth), so this module imports no
app, then the Celery queue's length.
"""

import hmac
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from celery import current_app
from django.conf import settings
from django.http import Http404, HttpResponse
from django.views.decorators.cache import never_cache
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY

REQUESTS = Counter("voiceagent_requests_total", "HTTP requests answered, by route, method and status.",
                   ["route", "method", "status"])
LATENCY = Histogram("voiceagent_request_duration_seconds", "Time to answer, by route and method.",
                    ["route", "method"], buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
CACHE_SECONDS = 5.0


# A client chooses its method: any other word is counted as "OTHER", so requests cannot mint new series.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# (route, method, status) -> the two children to update. `labels()` checks and locks on every call, two thirds of
# what counting cost a request (~12 of ~18 us); routes are the URL patterns, so this stays small.
_children: dict[tuple[str, str, int], tuple] = {}


def observe(request, status: int, seconds: float) -> None:
    match = getattr(request, "resolver_match", None)
    route = match.route if match else "unmatched"
    method = request.method if request.method in METHODS else "OTHER"
    children = _children.get((route, method, status))
    if children is None:
        children = _children[(route, method, status)] = (
            REQUESTS.labels(route, method, str(status)), LATENCY.labels(route, method)
        )
    children[0].inc()
    children[1].observe(seconds)


def _queue_length() -> dict[str, float]:
    """Messages waiting in each Celery queue (CELERY_TASK_QUEUES), NaN each when the broker cannot be read."""
    names = [queue.name for queue in settings.CELERY_TASK_QUEUES]
    try:
        with current_app.pool.acquire(block=True, timeout=0.5) as conn:
            client = conn.default_channel.client
            return {name: float(client.llen(name)) for name in names}
    except Exception:  # noqa: BLE001 - a scrape reports what it cannot read as unknown
        return dict.fromkeys(names, float("nan"))


@dataclass(frozen=True)
class GaugeSource:
    """What an app reports at scrape time: `read()` returns its values (database reads, run at most once per
    CACHE_SECONDS), `families(values)` turns them into metric families, and `empty` is what `families` is given to
    name them without reading anything."""

    read: Callable[[], object]
    families: Callable[[object], Iterable[Metric]]
    empty: object


_SOURCES: list[GaugeSource] = []


def register_gauges(*, read: Callable[[], object], families: Callable[[object], Iterable[Metric]],
                    empty: object) -> None:
    """Add an app's gauges to every scrape; called once from the app's `AppConfig.ready()`."""
    _SOURCES.append(GaugeSource(read=read, families=families, empty=empty))


def _read() -> tuple[list, dict[str, float]]:
    return [(source, source.read()) for source in _SOURCES], _queue_length()


class ScrapeCollector:
    def __init__(self):
        self._lock = threading.Lock()
        self._cached: tuple[float, tuple[list, float]] | None = None

    def values(self) -> tuple[list, dict[str, float]]:
        with self._lock:
            if self._cached is None or time.monotonic() - self._cached[0] > CACHE_SECONDS:
                self._cached = (time.monotonic(), _read())
            return self._cached[1]

    def describe(self):
        """The names, without reading anything (prometheus-client asks at registration, at import time)."""
        return list(self._families(_empty()))

    def collect(self):
        return self._families(self.values())

    @staticmethod
    def _families(values: tuple[list, dict[str, float]]):
        sources, queue = values
        for source, value in sources:
            yield from source.families(value)
        family = GaugeMetricFamily("voiceagent_celery_queue_length", "Tasks waiting on the broker, per queue.",
                                   labels=["queue"])
        for name, length in queue.items():
            family.add_metric([name], length)
        yield family


def _empty() -> tuple[list, dict[str, float]]:
    return [(source, source.empty) for source in _SOURCES], {}


COLLECTOR = ScrapeCollector()
REGISTRY.register(COLLECTOR)


def reset_cache() -> None:
    COLLECTOR._cached = None


def _registry():
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        registry.register(COLLECTOR)
        return registry
    return REGISTRY


@never_cache
def metrics_view(request):
    token = settings.METRICS_TOKEN
    if not token:
        raise Http404
    given = request.headers.get("Authorization", "").removeprefix("Bearer ")
    if not hmac.compare_digest(given.encode(), token.encode()):
        return HttpResponse("unauthorized\n", status=401, content_type="text/plain",
                            headers={"WWW-Authenticate": "Bearer"})
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)
