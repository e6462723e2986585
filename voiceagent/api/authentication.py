"""The one authenticator of /v1: `Authorization: Bearer <key>`, parsed exactly, checked by one digest lookup."""

import re
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone
from rest_framework import authentication, exceptions

from orgs.keys import digest_key
from orgs.models import ApiKey
from orgs.selectors import active_api_key_for_digest

# docs/api.md#authentication: the header must match this exactly; DRF's TokenAuthentication would accept `bearer`.
HEADER_PATTERN = re.compile(r"Bearer ([A-Za-z0-9_]{40})")  # fullmatch: `$` would allow a trailing newline
LAST_USED_RESOLUTION = timedelta(minutes=1)


class KeyPrincipal:
    """`request.user` for a key: authenticated, and nothing else (no Django user, no staff rights)."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False

    def __init__(self, key: ApiKey):
        self.key = key
        self.pk = None

    def __str__(self):
        return f"api-key:{self.key.key_prefix}"


class ApiKeyAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION")
        if header is None:
            return None
        match = HEADER_PATTERN.fullmatch(header)
        # Every malformed header still costs one digest lookup, so timing tells nothing about why it failed.
        digest = digest_key(match.group(1) if match else header)
        key = active_api_key_for_digest(digest)
        if key is None or match is None:
            raise exceptions.AuthenticationFailed()
        self._touch(key)
        return KeyPrincipal(key), key

    def authenticate_header(self, request):
        return "Bearer"

    @staticmethod
    def _touch(key: ApiKey) -> None:
        # At most one write a minute per key, and the filter makes concurrent processes write once between them.
        now = timezone.now()
        if key.last_used_at is None or now - key.last_used_at >= LAST_USED_RESOLUTION:
            cutoff = now - LAST_USED_RESOLUTION
            ApiKey.objects.filter(Q(last_used_at__isnull=True) | Q(last_used_at__lt=cutoff), pk=key.pk).update(
                last_used_at=now
            )
