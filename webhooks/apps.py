from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"

    def ready(self):
        from core.metrics import register_gauges
        from knowledge.services import delete_guard  # noqa: PLC0415
        from orgs.models import Location  # noqa: PLC0415 - apps are loaded only now

        from . import metrics
        from .services import refuse_delete_of_location_in_use  # noqa: PLC0415

        register_gauges(read=metrics.read, families=metrics.families, empty=metrics.EMPTY)
        delete_guard(Location, refuse_delete_of_location_in_use)
