"""Reads of the notifications app, always scoped to one organization."""

from django.db.models import Q, QuerySet

from orgs.models import Membership, Organization

from .models import NotificationRecipient


def recipient_list(*, org: Organization) -> QuerySet[NotificationRecipient]:
    """The org's recipients, oldest first, with their team members."""
    return NotificationRecipient.objects.for_org(org).select_related("team_member").order_by("created_at", "id")


def recipient_addresses(*, org_id, kind: str, location_id=None) -> list[str]:
    """The current addresses of the org's recipients who chose `kind` (team members without an e-mail drop out)
    and hear about `location_id`: the whole organization's, and those limited to locations including it (a
    location-less thing, None, reaches the whole organization's only).

    The team member is checked to be of the same org here too, so no query path can mail another org's people.
    """
    where = Q(location_ids__isnull=True)
    if location_id is not None:
        where |= Q(location_ids__contains=[location_id])
    rows = (
        NotificationRecipient.objects.filter(where, organization_id=org_id, **{kind: True})
        .filter(Q(team_member__isnull=True) | Q(team_member__organization_id=org_id))
        .select_related("team_member")
        .order_by("created_at", "id")
    )
    return [row.address for row in rows if row.address]


def org_admin_addresses(*, org_id) -> list[str]:
    """The e-mail addresses of the org's admins (dashboard logins with the admin role)."""
    return sorted(
        Membership.objects.filter(organization_id=org_id, role=Membership.Role.ADMIN)
        .exclude(user__email="")
        .values_list("user__email", flat=True)
    )

