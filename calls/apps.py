from django.apps import AppConfig


class CallsConfig(AppConfig):
    name = "calls"

    def ready(self):
        from webhooks.catalog import register_example  # noqa: PLC0415 - apps are loaded only now

        from .examples import BUILDERS  # noqa: PLC0415

        for event_type, builder in BUILDERS.items():
            register_example(event_type, builder)
