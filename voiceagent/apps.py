from django.apps import AppConfig


class VoiceagentConfig(AppConfig):
    name = "voiceagent"
