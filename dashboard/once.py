"""Secrets shown once: an API key's plaintext (and later a webhook secret) waits in the session between the
POST that made it and the page that shows it, and is popped as that page is built.

Never in a URL (logs, history, Referer), never in a message cookie, never shown twice. Any other dashboard
page drops what is pending (see `OrgMixin`), so a secret whose page was never opened does not linger in
the session store.
"""

SESSION_KEY = "dashboard.once"


def stash(request, kind: str, **data) -> None:
    request.session[SESSION_KEY] = {"kind": kind, **data}


def pop(request, kind: str) -> dict | None:
    """The pending secret of this kind, removed from the session; None if there is none (or another kind)."""
    pending = request.session.pop(SESSION_KEY, None)
    if not pending or pending.get("kind") != kind:
        return None
    return pending


def discard(request) -> None:
    if SESSION_KEY in request.session:
        del request.session[SESSION_KEY]
