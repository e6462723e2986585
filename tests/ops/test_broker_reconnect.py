"""A task that finishes after its broker connection was lost (Redis restarted, a Sentinel primary killed) must not
stop the worker: kombu 5.7 acknowledges, rejects and gives back messages through their own channel even once its
connection is closed, which raised AttributeError and ended the worker ("Unrecoverable error"); voiceagent/celery.py
leaves such messages to the visibility timeout. Here against the real broker: a channel whose connection closed."""

import pytest
from django.conf import settings
from kombu import Connection

import voiceagent.celery  # noqa: F401 - the guard is installed where the Celery app is


@pytest.mark.parametrize("operation", ["ack", "reject", "restore_unacked_once"])
def test_a_message_of_a_closed_connection_is_left_to_the_visibility_timeout(operation):
    connection = Connection(settings.CELERY_BROKER_URL)
    channel = connection.channel()
    qos = channel.qos
    connection.close()  # as the worker's connection is when the broker went away under a running task
    assert channel.connection is None
    call = {"ack": lambda: qos.ack("tag-1"), "reject": lambda: qos.reject("tag-1"),
            "restore_unacked_once": qos.restore_unacked_once}[operation]
    assert call() is None  # raised AttributeError before, and the worker stopped for good


@pytest.mark.parametrize("operation", ["ack", "reject", "restore_unacked_once"])
def test_a_message_of_a_transport_its_connection_let_go_is_left_to_the_visibility_timeout(operation):
    """The other state a killed Sentinel primary leaves (the cluster test's failover): the channel still names its
    transport, which its kombu Connection let go (`client` None), so kombu's Redis pool cannot be rebuilt from it."""
    connection = Connection(settings.CELERY_BROKER_URL)
    channel = connection.channel()
    qos = channel.qos
    connection._do_close_transport()  # what Connection._close does after its channels, here with one left open
    assert channel.connection is not None and channel.connection.client is None
    call = {"ack": lambda: qos.ack("tag-1"), "reject": lambda: qos.reject("tag-1"),
            "restore_unacked_once": qos.restore_unacked_once}[operation]
    assert call() is None  # raised AttributeError ('NoneType' object has no attribute 'hostname') before
