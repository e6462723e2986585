"""Counts the round trips this process makes to Redis: every command or pipeline goes out as one packed write."""

from contextlib import contextmanager
from unittest import mock

from redis.connection import AbstractConnection


@contextmanager
def redis_round_trips():
    sent: list[bytes] = []
    original = AbstractConnection.send_packed_command

    def spy(self, command, check_health=True):
        sent.append(command)
        return original(self, command, check_health)

    with mock.patch.object(AbstractConnection, "send_packed_command", spy):
        yield sent
