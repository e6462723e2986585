from voiceagent.errors import DomainError, Forbidden


class NotAnAdmin(Forbidden):
    """Only an organization's admins manage keys, webhooks and members."""


class MemberExists(DomainError):
    status = 409
    code = "conflict"
