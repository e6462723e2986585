"""The Celery app: workers deliver webhooks and send mail; beat runs the outbox sweeper."""

import logging
import os

from celery import Celery
from kombu.transport import redis as kombu_redis

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "voiceagent.settings")

app = Celery("voiceagent")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

_restore_unacked_once = kombu_redis.QoS.restore_unacked_once


def _restore_unacked_once_or_leave_them(self, stderr=None):
    """kombu 5.7 gives a lost connection's unacknowledged messages back through that connection once it is closed
    (its pool is gone): the AttributeError stopped the worker for good ("Unrecoverable error") whenever Redis went
    away under a task, a killed Sentinel primary included. Left in Redis's unacked set, the messages come back after
    the visibility timeout, and every outbox's sweep republishes its due rows long before; the worker reconnects
    (to the new primary, behind Sentinel) and carries on."""
    try:
        return _restore_unacked_once(self, stderr)
    except AttributeError:
        logging.getLogger("voiceagent.celery").warning(
            "broker connection lost with unacknowledged messages; they are left to the visibility timeout"
        )


kombu_redis.QoS.restore_unacked_once = _restore_unacked_once_or_leave_them
