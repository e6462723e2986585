"""Typed errors of the webhooks app."""

from core.errors import DomainError


class UnknownEventType(DomainError):
    """A programming error in the emitting code: the type is not one of EVENT_TYPES (docs/webhooks.md#event-types)."""

    status = 500
    code = "internal_error"
