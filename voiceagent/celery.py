"""The Celery app: workers deliver webhooks and send mail; beat runs the outbox sweeper."""

import logging
import os

from celery import Celery
from kombu.transport import redis as kombu_redis

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "voiceagent.settings")

app = Celery("voiceagent")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

def _only_on_an_open_channel(method):
    """kombu 5.7's Redis QoS acknowledges, rejects and gives back unacknowledged messages through the channel they
    came on, even once that channel's connection is closed (`channel.connection` is None, its pool gone, or the
    transport it names was let go by its kombu Connection: `client` None, seen when a Sentinel primary was killed): the
    AttributeError stopped the worker for good ("Unrecoverable error") whenever Redis went away under a task, a
    killed Sentinel primary included (a task finishing after the reconnect acks through the dead channel). Such a
    message stays in Redis's unacked set and comes back after the visibility timeout (every task is idempotent, and
    the outboxes' sweeps republish their due rows long before); the worker reconnects (to the new primary, behind
    Sentinel) and carries on."""

    def guarded(self, *args, **kwargs):
        transport = self.channel.connection
        if transport is None or transport.client is None:
            logging.getLogger("voiceagent.celery").warning(
                "broker connection lost: %s of its messages left to the visibility timeout", method.__name__)
            return None
        return method(self, *args, **kwargs)

    return guarded


for _name in ("ack", "reject", "restore_unacked_once"):
    setattr(kombu_redis.QoS, _name, _only_on_an_open_channel(getattr(kombu_redis.QoS, _name)))
