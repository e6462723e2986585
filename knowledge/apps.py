from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    verbose_name = "Agent knowledge"

    def ready(self):
        from orgs.scopes import location_ids_resolved_by  # noqa: PLC0415 - apps are loaded only now

        from .services import resolve_location_ids  # noqa: PLC0415

        location_ids_resolved_by(resolve_location_ids)
