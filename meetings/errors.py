"""Typed errors of the meetings product (rendered by the one API error handler and the dashboard's mixin)."""

from core.errors import Forbidden


class MeetingsProductOff(Forbidden):
    """The org has not turned the meetings product on: nothing is dispatched for it."""
