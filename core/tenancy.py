"""The one tenancy lookup of the API, the runtime and the dashboard: a row by its id, narrowed to an org through its
manager's `for_org(org)` (orgs.tenancy.OrgOwnedQuerySet gives every org-owned model one), or `NotFound`."""

import copy
import uuid
from collections.abc import Iterable

from django.core.exceptions import ValidationError
from django.db import models

from core.errors import Forbidden, NotFound


def scoped(org, location_ids: Iterable | None):
    """`org` seen through `location_ids` (None: the whole organization, `org` itself): a copy of the organization
    carrying `scope_location_ids`, which every `for_org` narrows by (orgs.tenancy). The caller's instance keeps its
    own scope."""
    if location_ids is None:
        return org
    view = copy.copy(org)
    view.scope_location_ids = frozenset(uuid.UUID(str(pk)) for pk in location_ids)
    return view


def location_ids_of(org) -> frozenset | None:
    """The locations `org` is limited to, or None for the whole organization."""
    return getattr(org, "scope_location_ids", None)


def whole_org(org):
    """`org` without its scope: for what the organization does as a whole whoever triggered it (delivering its
    events, counting its quotas), never for what a principal reads."""
    if location_ids_of(org) is None:
        return org
    view = copy.copy(org)
    view.scope_location_ids = None
    return view


class ScopeForbidden(Forbidden):
    """A principal limited to locations asked for something of the whole organization (or for a location-less row
    that applies to all of them): 403 `forbidden`, naming the scope."""

    def __init__(self, what: str, location_ids, *, verb: str = "changed"):
        ids = sorted(str(pk) for pk in location_ids)
        message = f"Limited to locations {', '.join(ids)}: {what} cannot be {verb} within this scope."
        super().__init__(message, details={"message": message, "location_ids": ids})


def get_for_org(rows, org, pk):
    """This org's row with this id, or `NotFound`: the one tenancy lookup of the API, the runtime and the dashboard.

    `rows` is a model or a queryset (for `select_related` and the like); it is narrowed with `for_org(org)` here, so no
    caller can forget it. A malformed id, a missing id and another org's id fail identically (docs/api.md#errors: the
    same 404 for what does not exist and what belongs to someone else). `org` may carry a scope (orgs.tenancy `scoped`):
    a row outside it is that same 404. The row comes back with `org` as its `organization`, so a service given the row
    alone acts within the scope it was read through.
    """
    row = get_or_not_found(_queryset(rows).for_org(org), pk)
    if getattr(row, "organization_id", None) == getattr(org, "pk", None):
        row.organization = org
    return row


def get_or_not_found(rows, pk):
    """The row with this id, or `NotFound` (a malformed id fails like a missing one). Not narrowed to an org: only
    for lookups with no org to narrow by (the runtime's org named in its path, a dispatch found by its hook's
    token). Everything else goes through `get_for_org`."""
    queryset = _queryset(rows)
    try:
        pk = queryset.model._meta.pk.to_python(pk)
    except (ValidationError, TypeError, ValueError):
        raise NotFound() from None
    row = queryset.filter(pk=pk).first()
    if row is None:
        raise NotFound()
    return row


def _queryset(rows) -> models.QuerySet:
    return rows.objects.all() if isinstance(rows, type) else rows
