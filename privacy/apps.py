from django.apps import AppConfig


class PrivacyConfig(AppConfig):
    name = "privacy"
    verbose_name = "Privacy"

    def ready(self):
        from calls.services.content import suppression_checked_by  # noqa: PLC0415 - apps are loaded only now
        from webhooks.catalog import register_example  # noqa: PLC0415

        from .examples import contact_erased  # noqa: PLC0415
        from .selectors import number_is_suppressed  # noqa: PLC0415

        register_example("contact.erased", contact_erased)
        suppression_checked_by(number_is_suppressed)
