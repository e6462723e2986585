"""The Celery app: workers deliver webhooks and send mail; beat runs the outbox sweeper."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "voiceagent.settings")

app = Celery("voiceagent")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
