from voiceagent.errors import Forbidden


class NotAnAdmin(Forbidden):
    """Only an organization's admins manage keys, webhooks and members."""
