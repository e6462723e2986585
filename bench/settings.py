"""The bench server's settings: the real ones, plus a bare JSON view as the ceiling of this stack."""

from voiceagent.settings import *  # noqa: F403

DEBUG = False
ROOT_URLCONF = "bench.urls"
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}
