"""Typed errors of the calls domain (rendered by the one API error handler)."""

from voiceagent.errors import Conflict, DomainError, InvalidTransition, NotFound, RecordingNotReady

__all__ = [
    "CallNotFound",
    "CancellationWindowClosed",
    "Conflict",
    "InvalidTransition",
    "NotFound",
    "RecordingDisabled",
    "RecordingNotReady",
]


class CallNotFound(NotFound):
    """No such call in this organization (another org's id looks exactly the same)."""


class CancellationWindowClosed(DomainError):
    """A caller asked to cancel an order that no longer allows it (not cancelable, or past its deadline)."""

    status = 409
    code = "cancellation_window_closed"


class RecordingDisabled(DomainError):
    """The organization turned call recording off, so an upload is refused and nothing is stored."""

    status = 409
    code = "recording_disabled"
