from django.apps import AppConfig


class VoiceagentConfig(AppConfig):
    name = "voiceagent"

    def ready(self):
        from .api import schema  # noqa: F401  (registers the OpenAPI auth extension)
