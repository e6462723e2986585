"""`location_ids` as keys, members and subscriptions take them: a non-empty list of distinct locations of the
organization (within the caller's own scope), or None for the whole organization (docs/api.md#locations-and-scope).

Locations live in the knowledge app, above this one: it registers its check (`resolve_location_ids`, which also
locks the locations against a concurrent delete) from its AppConfig.ready(), so this app uses it without importing
it.
"""

import uuid
from collections.abc import Callable

from core.errors import ValidationFailed

from .models import Membership

_resolve: Callable | None = None


def location_ids_resolved_by(resolve: Callable) -> None:
    """`resolve(org, location_ids, *, field) -> list | None`, raising ValidationFailed under `field`."""
    global _resolve  # noqa: PLW0603 - registered once, from AppConfig.ready()
    _resolve = resolve


def clean_location_ids(*, org, location_ids, field: str = "location_ids") -> list[uuid.UUID] | None:
    """The locations named, or ValidationFailed under `field`: empty, repeated, malformed, or not a location of
    `org` that its scope may name (an unknown one and another organization's read the same). Assumes a
    transaction is open (the locations stay locked until it ends)."""
    return _resolve(org, location_ids, field=field)  # unregistered: a TypeError, never an unchecked scope


def clean_member_scope(*, org, role: str, location_ids) -> list[uuid.UUID] | None:
    """The locations a member (or an invitee) of `role` is limited to: a location manager's, which it must name
    (`clean_location_ids`), and None for every other role (the whole organization), which names none. ValidationFailed
    under `location_ids` otherwise, so a role change never keeps or drops a scope silently."""
    if role != Membership.Role.LOCATION_MANAGER:
        if location_ids:
            raise ValidationFailed(field_errors={"location_ids": [
                "Only a location manager is limited to locations: choose that role, or no location."]})
        return None
    if not location_ids:
        raise ValidationFailed(field_errors={"location_ids": ["Choose at least one location for a location manager."]})
    return clean_location_ids(org=org, location_ids=list(location_ids))


def audited_location_ids(location_ids) -> list[str] | None:
    """Location ids as the audit trail keeps them, in a stable order (None: the whole organization)."""
    return None if location_ids is None else sorted(str(pk) for pk in location_ids)
