"""The agent runtime's credential: `Authorization: Bearer <token>`, where the token is AGENT_RUNTIME_TOKEN or one of
AGENT_RUNTIME_TOKENS (a rotation accepts the old and the new at once), compared in constant time."""

import hashlib
import hmac
import re

from django.conf import settings
from rest_framework import authentication, exceptions, permissions

from core.actors import RUNTIME

HEADER_PATTERN = re.compile(r"Bearer (\S+)")  # fullmatch: `$` would allow a trailing newline


class RuntimePrincipal:
    """`request.user` for the runtime: authenticated as the service, with no org of its own (the path names it)."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False
    pk = None

    def __str__(self):
        return "agent-runtime"


def accepted_tokens() -> list[str]:
    """AGENT_RUNTIME_TOKEN and AGENT_RUNTIME_TOKENS, the empty ones left out: an unset token accepts nothing."""
    return [token for token in (settings.AGENT_RUNTIME_TOKEN, *settings.AGENT_RUNTIME_TOKENS) if token]


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class RuntimeTokenAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION")
        if header is None:
            return None
        match = HEADER_PATTERN.fullmatch(header)
        presented = _digest(match.group(1) if match else "")
        # Every accepted token is compared, always, as digests of one length: how long the check takes tells
        # nothing about any token, its length, or which one matched.
        valid = False
        for token in accepted_tokens():
            valid |= hmac.compare_digest(presented, _digest(token))
        if not match or not valid:
            raise exceptions.AuthenticationFailed()
        request._request._audit_actor = RUNTIME  # the actor of the audit entries this request writes
        return RuntimePrincipal(), None

    def authenticate_header(self, request):
        return "Bearer"


class IsRuntime(permissions.BasePermission):
    def has_permission(self, request, view):
        return isinstance(request.user, RuntimePrincipal)
