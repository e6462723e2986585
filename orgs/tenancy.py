"""Tenancy in one place: every org-owned row is reached through `for_org(org)`."""

import uuid

from django.core.exceptions import ValidationError
from django.db import models

from voiceagent.errors import NotFound


class OrgOwnedQuerySet(models.QuerySet):
    def for_org(self, org):
        return self.filter(organization=org)


class OrgOwnedModel(models.Model):
    """Base for every model that belongs to one organization: a uuid id, the org, and `objects.for_org`."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey("orgs.Organization", on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = OrgOwnedQuerySet.as_manager()

    class Meta:
        abstract = True


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
