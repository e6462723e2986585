"""`GET /metrics` in the Prometheus text format, behind `METRICS_TOKEN` (off, 404, when unset).

Per process, counted by the request middleware: requests by route, method and status, and their latency. Knowledge
reads are the requests of the runtime's knowledge route. With several gunicorn workers set PROMETHEUS_MULTIPROC_DIR
(prometheus-client's multiprocess mode) so a scrape sums them.

From the database and the broker at scrape time (cheap indexed reads, cached 5 seconds): the webhook outbox's
depth and delivery lag (the age of the oldest delivery still pending), attempts of the last 15 minutes by result,
disabled subscriptions, the e-mail outbox's depth, and the Celery queue's length.
"""

import hmac
import os
import threading
import time
from datetime import timedelta

import redis
from django.conf import settings
from django.db.models import Count, Min, Q
from django.http import Http404, HttpResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import REGISTRY

from notifications.models import EmailNotification
from webhooks.models import Delivery, DeliveryAttempt, Subscription

REQUESTS = Counter("voiceagent_requests_total", "HTTP requests answered, by route, method and status.",
                   ["route", "method", "status"])
LATENCY = Histogram("voiceagent_request_duration_seconds", "Time to answer, by route and method.",
                    ["route", "method"], buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
CACHE_SECONDS = 5.0
ATTEMPT_WINDOW = timedelta(minutes=15)


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


def _queue_length() -> float:
    url = settings.CELERY_BROKER_URL
    if not url.startswith(("redis://", "rediss://")):
        return float("nan")
    client = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
    try:
        return float(client.llen("celery"))
    finally:
        client.close()


def _read() -> dict:
    now = timezone.now()
    pending = Delivery.objects.filter(status=Delivery.Status.PENDING).aggregate(n=Count("pk"), oldest=Min("created_at"))
    attempts = DeliveryAttempt.objects.filter(created_at__gte=now - ATTEMPT_WINDOW).aggregate(
        succeeded=Count("pk", filter=Q(status_code__gte=200, status_code__lt=300)),
        failed=Count("pk", filter=Q(status_code__isnull=True) | Q(status_code__lt=200) | Q(status_code__gte=300)),
    )
    return {
        "outbox_depth": pending["n"],
        "lag": (now - pending["oldest"]).total_seconds() if pending["oldest"] else 0.0,
        "attempts": attempts,
        "disabled": Subscription.objects.filter(enabled=False).count(),
        "email_depth": EmailNotification.objects.filter(status=EmailNotification.Status.PENDING).count(),
        "queue": _queue_length(),
    }


class OutboxCollector:
    def __init__(self):
        self._lock = threading.Lock()
        self._cached: tuple[float, dict] | None = None

    def values(self) -> dict:
        with self._lock:
            if self._cached is None or time.monotonic() - self._cached[0] > CACHE_SECONDS:
                self._cached = (time.monotonic(), _read())
            return self._cached[1]

    def describe(self):
        """The names, without reading anything (prometheus-client asks at registration, at import time)."""
        return list(self._families(_EMPTY))

    def collect(self):
        return self._families(self.values())

    @staticmethod
    def _families(v: dict):
        yield GaugeMetricFamily("voiceagent_webhook_outbox_depth", "Webhook deliveries pending.", v["outbox_depth"])
        yield GaugeMetricFamily("voiceagent_webhook_delivery_lag_seconds",
                                "Age of the oldest webhook delivery still pending (0: none).", v["lag"])
        attempts = GaugeMetricFamily("voiceagent_webhook_attempts_recent",
                                     "Webhook attempts of the last 15 minutes, by result.", labels=["result"])
        for result, count in v["attempts"].items():
            attempts.add_metric([result], count)
        yield attempts
        yield GaugeMetricFamily("voiceagent_webhook_subscriptions_disabled", "Disabled subscriptions.", v["disabled"])
        yield GaugeMetricFamily("voiceagent_email_outbox_depth", "Notification e-mails pending.", v["email_depth"])
        yield GaugeMetricFamily("voiceagent_celery_queue_length", "Tasks waiting on the broker.", v["queue"])


_EMPTY = {"outbox_depth": 0, "lag": 0.0, "attempts": {}, "disabled": 0, "email_depth": 0, "queue": 0.0}
COLLECTOR = OutboxCollector()
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
