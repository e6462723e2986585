"""Secrets shown once: an API key's plaintext or a webhook signing secret waits in the session between the POST
that made it and the page that shows it, and is popped as that page is built (`ShowOnceMixin`).

Never in a URL (logs, history, Referer), never in a message cookie, never shown twice, and never readable in
the session store: the session backend writes its data to `django_session` as signed (not encrypted) JSON, so
what is stashed is sealed with Fernet under `FIELD_ENCRYPTION_KEY` (webhooks.crypto, the key that already
protects webhook secrets at rest). Any other dashboard page drops what is pending (see `OrgMixin`), so a secret
whose page was never opened does not linger in the session store.
"""

import json

from cryptography.fernet import InvalidToken
from django.contrib import messages
from django.shortcuts import redirect
from django.utils.cache import add_never_cache_headers, patch_cache_control

from webhooks import crypto

SESSION_KEY = "dashboard.once"


def _seal(data: dict) -> str:
    return crypto.encrypt(json.dumps(data))


def _unseal(token) -> dict | None:
    try:
        return json.loads(crypto.decrypt(token))
    except (InvalidToken, TypeError, AttributeError, ValueError):
        return None  # sealed under another key (rotated), or not ours: as if nothing were pending


def stash(request, kind: str, **data) -> None:
    """Keeps `data` (plaintext included) for the next page of this kind, sealed."""
    request.session[SESSION_KEY] = {"kind": kind, "sealed": _seal(data)}


def pop(request, kind: str) -> dict | None:
    """The pending secret of this kind, removed from the session; None if there is none (or another kind)."""
    pending = request.session.pop(SESSION_KEY, None)
    if not isinstance(pending, dict) or pending.get("kind") != kind:
        return None
    return _unseal(pending.get("sealed"))


def discard(request) -> None:
    if SESSION_KEY in request.session:
        del request.session[SESSION_KEY]


class ShowOnceMixin:
    """A GET-only page that shows a stashed secret once. Put it first among the bases, before the org mixin
    (`class V(ShowOnceMixin, AdminRequiredMixin, TemplateView)`), so that its `shows_secret_once` wins and the
    org mixin does not drop the secret before this page pops it.

    Subclasses set `once_kind`, `once_gone_message` and `once_gone_url` (a URL name), and implement
    `get_once_context(pending)`: the page's context for the popped data, or None when its object is gone.
    No secret (already shown, never stashed, or its object deleted): a message and a redirect to `once_gone_url`.
    """

    http_method_names = ["get"]
    shows_secret_once = True
    once_kind: str
    once_gone_message: str
    once_gone_url: str

    def get_once_context(self, pending: dict) -> dict | None:
        raise NotImplementedError

    def get(self, request, *args, **kwargs):
        pending = pop(request, self.once_kind)
        context = self.get_once_context(pending) if pending else None
        if context is None:
            messages.info(request, self.once_gone_message)
            return redirect(self.once_gone_url)
        response = self.render_to_response(self.get_context_data(plaintext=pending["plaintext"], **context))
        # Keep the page out of every cache and the back/forward cache.
        add_never_cache_headers(response)
        patch_cache_control(response, no_store=True, private=True)
        return response
