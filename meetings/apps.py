from django.apps import AppConfig


class MeetingsConfig(AppConfig):
    name = "meetings"
    verbose_name = "Meetings"

    def ready(self):
        from webhooks.catalog import register_example  # noqa: PLC0415 - apps are loaded only now

        from .examples import outcome_approved  # noqa: PLC0415

        register_example("meeting.outcome_approved", outcome_approved)
