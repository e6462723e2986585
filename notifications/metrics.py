"""The e-mail outbox's depth on GET /metrics (core.metrics), registered from `NotificationsConfig.ready()`."""

from prometheus_client.core import GaugeMetricFamily

from notifications.models import EmailNotification

EMPTY = 0


def read() -> int:
    return EmailNotification.objects.filter(status=EmailNotification.Status.PENDING).count()


def families(depth: int):
    yield GaugeMetricFamily("voiceagent_email_outbox_depth", "Notification e-mails pending.", depth)
