"""Deny by default: every /v1 view needs a key, and the method decides the scope it needs."""

from rest_framework import permissions

from .errors import InsufficientScope

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def required_scope(method: str) -> str:
    return "read" if method in READ_METHODS else "write"


class HasScope(permissions.BasePermission):
    def has_permission(self, request, view):
        key = request.auth
        if key is None:
            return False  # DRF turns this into 401 because an authenticator exists
        # A view may need more than its method says: the audit trail needs `audit` (`read` never grants it), checked
        # first; its writes (starting a verification) need `write` as well, as every write does.
        for required in (getattr(view, "required_scope", None), required_scope(request.method)):
            if required and required not in key.scopes:
                raise InsufficientScope(required)
        # And some need a scope besides those: erasures need `privacy` (checked after the method's, so a read key's
        # POST is told it lacks `write`).
        also = getattr(view, "also_required_scope", None)
        if also and also not in key.scopes:
            raise InsufficientScope(also)
        return True
