"""The webhook outbox's gauges on GET /metrics (core.metrics), registered from `WebhooksConfig.ready()`: the depth,
the delivery lag (the age of the oldest delivery still pending), attempts of the last 15 minutes by result, and
disabled subscriptions."""

from datetime import timedelta

from django.db.models import Count, Min, Q
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily

from webhooks.models import Delivery, DeliveryAttempt, Subscription

ATTEMPT_WINDOW = timedelta(minutes=15)
EMPTY = {"outbox_depth": 0, "lag": 0.0, "attempts": {}, "disabled": 0}


def read() -> dict:
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
    }


def families(v: dict):
    yield GaugeMetricFamily("voiceagent_webhook_outbox_depth", "Webhook deliveries pending.", v["outbox_depth"])
    yield GaugeMetricFamily("voiceagent_webhook_delivery_lag_seconds",
                            "Age of the oldest webhook delivery still pending (0: none).", v["lag"])
    attempts = GaugeMetricFamily("voiceagent_webhook_attempts_recent",
                                 "Webhook attempts of the last 15 minutes, by result.", labels=["result"])
    for result, count in v["attempts"].items():
        attempts.add_metric([result], count)
    yield attempts
    yield GaugeMetricFamily("voiceagent_webhook_subscriptions_disabled", "Disabled subscriptions.", v["disabled"])
