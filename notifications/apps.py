from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "notifications"

    def ready(self):
        from core.metrics import register_gauges

        from . import metrics

        register_gauges(read=metrics.read, families=metrics.families, empty=metrics.EMPTY)
