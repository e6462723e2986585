from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "Public API and agent runtime interfaces"

    def ready(self):
        from . import schema  # noqa: F401, PLC0415 - registers the OpenAPI auth extension once apps are loaded
