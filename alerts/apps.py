from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "alerts"

    def ready(self):
        from knowledge.services import delete_guard  # noqa: PLC0415
        from orgs.models import Location  # noqa: PLC0415 - apps are loaded only now
        from webhooks.catalog import register_example  # noqa: PLC0415

        from .examples import BUILDERS  # noqa: PLC0415
        from .services import refuse_delete_of_location_in_use  # noqa: PLC0415

        for event_type, builder in BUILDERS.items():
            register_example(event_type, builder)
        delete_guard(Location, refuse_delete_of_location_in_use)
