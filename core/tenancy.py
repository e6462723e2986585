"""The one tenancy lookup of the API, the runtime and the dashboard: a row by its id, narrowed to an org through its
manager's `for_org(org)` (orgs.tenancy.OrgOwnedQuerySet gives every org-owned model one), or `NotFound`."""

from django.core.exceptions import ValidationError
from django.db import models

from core.errors import NotFound


def get_for_org(rows, org, pk):
    """This org's row with this id, or `NotFound`: the one tenancy lookup of the API, the runtime and the dashboard.

    `rows` is a model or a queryset (for `select_related` and the like); it is narrowed with `for_org(org)` here,
    so no caller can forget it. A malformed id, a missing id and another org's id fail identically (the spec: the
    same 404 for what does not exist and what belongs to someone else).
    """
    return get_or_not_found(_queryset(rows).for_org(org), pk)


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
