"""Tenancy in one place: every org-owned row is reached through `for_org(org)` (the lookups: core.tenancy)."""

import uuid

from django.db import models


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
