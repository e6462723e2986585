"""The agent runtime's one credential: `Authorization: Bearer <AGENT_RUNTIME_TOKEN>`, compared in constant time."""

import hmac
import re

from django.conf import settings
from rest_framework import authentication, exceptions, permissions

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


class RuntimeTokenAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION")
        if header is None:
            return None
        expected = settings.AGENT_RUNTIME_TOKEN
        match = HEADER_PATTERN.fullmatch(header)
        presented = match.group(1) if match else ""
        # compare_digest on bytes of both sides every time; an unset token never authenticates anything.
        valid = hmac.compare_digest(presented.encode(), expected.encode())
        if not expected or not match or not valid:
            raise exceptions.AuthenticationFailed()
        return RuntimePrincipal(), None

    def authenticate_header(self, request):
        return "Bearer"


class IsRuntime(permissions.BasePermission):
    def has_permission(self, request, view):
        return isinstance(request.user, RuntimePrincipal)
