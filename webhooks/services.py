"""Writes of the webhooks app. `emit` is re-exported here: `from webhooks.services import emit`."""

from .events import emit

__all__ = ["emit"]
