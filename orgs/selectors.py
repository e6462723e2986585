"""Org-scoped reads of organizations, memberships and keys."""

from .models import ApiKey, Membership


def api_key_list(*, org):
    return ApiKey.objects.for_org(org).select_related("created_by", "revoked_by").order_by("-created_at", "-id")


def membership_list(*, org):
    return Membership.objects.for_org(org).select_related("user").order_by("created_at", "id")


def membership_for_user(*, user, org_id=None) -> Membership | None:
    """The dashboard's current membership: the one asked for, else the user's oldest."""
    if not user.is_authenticated:
        return None
    memberships = Membership.objects.filter(user=user).select_related("organization").order_by("created_at", "id")
    if org_id:
        memberships = memberships.filter(organization_id=org_id)
    return memberships.first()
