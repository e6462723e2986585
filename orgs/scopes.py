"""`location_ids` as keys, members and subscriptions take them: a non-empty list of distinct locations of the
organization (within the caller's own scope), or None for the whole organization (docs/api.md#locations-and-scope).
"""

import uuid

from core.errors import ValidationFailed

from .models import Location, Membership


def clean_location_ids(*, org, location_ids, field: str = "location_ids") -> list[uuid.UUID] | None:
    """A list of `org`'s location ids as given (None passes: every location). It must be non-empty and without
    repeats, and each id a location of `org` that its scope may name: a malformed id, a missing one and another
    org's are the same 400 under `field`, naming them. The locations are locked (FOR NO KEY UPDATE) until the
    caller's transaction ends, so a concurrent `location_delete` either comes first (refused here) or waits and then
    sees what this stored."""
    if location_ids is None:
        return None
    if not isinstance(location_ids, list | tuple) or not location_ids:
        message = "Give a non-empty list of location ids, or null for every location."
        raise ValidationFailed(field_errors={field: [message]})
    ids, bad = [], []
    for raw in location_ids:
        try:
            ids.append(raw if isinstance(raw, uuid.UUID) else uuid.UUID(str(raw)))
        except ValueError:
            bad.append(str(raw))
    if len(set(ids)) != len(ids):
        raise ValidationFailed(field_errors={field: ["Location ids must not repeat."]})
    found = set(Location.objects.for_org(org).select_for_update(no_key=True).filter(pk__in=ids)
                .values_list("pk", flat=True))
    bad += [str(pk) for pk in ids if pk not in found]
    if bad:
        raise ValidationFailed(field_errors={field: [f"Not a location of this organization: {', '.join(bad)}."]})
    return ids


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
