from django.apps import AppConfig


class CallsConfig(AppConfig):
    name = "calls"

    def ready(self):
        from contacts.models import Contact  # noqa: PLC0415 - apps are loaded only now
        from knowledge.models import Calendar  # noqa: PLC0415
        from knowledge.services import delete_guard  # noqa: PLC0415
        from orgs.tenancy import set_location_rule  # noqa: PLC0415
        from webhooks.catalog import register_example  # noqa: PLC0415

        from .examples import BUILDERS  # noqa: PLC0415
        from .models import contacts_at_locations  # noqa: PLC0415
        from .services.bookings import refuse_calendar_delete_with_upcoming  # noqa: PLC0415

        for event_type, builder in BUILDERS.items():
            register_example(event_type, builder)
        delete_guard(Calendar, refuse_calendar_delete_with_upcoming)
        set_location_rule(Contact, contacts_at_locations)
