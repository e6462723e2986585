from core.errors import DomainError, Forbidden


class NotAnAdmin(Forbidden):
    """Only an organization's admins manage keys, webhooks and members."""


class TooManyInvitations(DomainError):
    """An organization sends at most INVITATIONS_PER_HOUR invitations (and resends) an hour."""

    status = 429
    code = "rate_limited"


class TooManyOrganizations(DomainError):
    """A user creates at most ORG_CREATIONS_PER_USER_PER_HOUR organizations an hour."""

    status = 429
    code = "rate_limited"


class InvitationInvalid(DomainError):
    """A link that is unknown, expired, used, revoked or superseded by a resend: one answer for all of them."""

    status = 404
    code = "not_found"


class WrongAccount(Forbidden):
    """The invitation is for another e-mail address than the signed-in user's."""


class LastAdmin(DomainError):
    """An organization keeps at least one admin: the last one can neither leave nor be removed."""

    status = 409
    code = "conflict"
