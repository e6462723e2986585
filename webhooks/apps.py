from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"

    def ready(self):
        from core.metrics import register_gauges

        from . import metrics

        register_gauges(read=metrics.read, families=metrics.families, empty=metrics.EMPTY)
