"""Typed errors raised only by the calls domain (rendered by the one API error handler). Errors several apps raise
(NotFound, Conflict, InvalidTransition, ValidationFailed) live in core.errors."""

from core.errors import DomainError, NotFound


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


class RecordingNotReady(DomainError):
    """The call has no recording yet (the upload has not finished): a 404 of its own, so a client knows to wait."""

    status = 404
    code = "recording_not_ready"


class RecordingWithheld(DomainError):
    """The call's recording was not kept: a card, government id or bank account number was heard on it and the
    organization keeps no such recordings (docs/privacy.md#redaction). It will never be ready."""

    status = 404
    code = "recording_withheld"


class SlotUnavailable(DomainError):
    """A booking the calendar cannot take: outside its weekly hours, or overlapping a confirmed booking. The
    runtime offers the caller another time (`details.reason`: `outside_hours` or `taken`)."""

    status = 409
    code = "slot_unavailable"

    def __init__(self, reason: str):
        super().__init__(reason, details={"reason": reason})
