"""Org-scoped reads of organizations, memberships, keys and the knowledge base."""

from voiceagent.timefmt import iso_ms

from .models import ApiKey, Fact, Location, Membership, Organization, TeamMember


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


# --- The knowledge base ---------------------------------------------------------------------------------------


def location_list(*, org):
    """The org's locations, for cursor pagination (newest first). One query per page."""
    return Location.objects.for_org(org)


def fact_list(*, org):
    return Fact.objects.for_org(org)


def team_member_list(*, org):
    return TeamMember.objects.for_org(org)


def knowledge_for_org(org) -> tuple[str, dict]:
    """What the agent runtime answers from: (etag, {"version", "facts", "locations", "team_members"}).

    The ETag is the org's `knowledge_version`, which every write to facts, locations and team members bumps in
    its own transaction (orgs.services.knowledge_version_bump). The version is read BEFORE the rows: under READ
    COMMITTED the rows are then at least that new, so an ETag never labels older data (at worst newer data
    carries the older tag, and the next read fetches again). Items have the public /v1 shapes.

    For the calls app: add escalation rules to the dict here, and bump the version in their services too.
    """
    version = Organization.objects.filter(pk=org.pk).values_list("knowledge_version", flat=True).get()
    facts = [
        {"id": str(f.id), "label": f.label, "content": f.content,
         "location_id": str(f.location_id) if f.location_id else None,
         "created_at": iso_ms(f.created_at), "updated_at": iso_ms(f.updated_at)}
        for f in Fact.objects.for_org(org).order_by("label", "id")
    ]
    locations = [
        {"id": str(loc.id), "name": loc.name, "address": loc.address, "timezone": loc.timezone,
         "phone_number": loc.phone_number, "created_at": iso_ms(loc.created_at), "updated_at": iso_ms(loc.updated_at)}
        for loc in Location.objects.for_org(org).order_by("name", "id")
    ]
    team_members = [
        {"id": str(m.id), "name": m.name, "email": m.email, "phone_number": m.phone_number, "role": m.role,
         "is_platform_user": m.is_platform_user,
         "created_at": iso_ms(m.created_at), "updated_at": iso_ms(m.updated_at)}
        for m in TeamMember.objects.for_org(org).order_by("name", "id")
    ]
    etag = f'"knowledge-{version}"'
    return etag, {"version": version, "facts": facts, "locations": locations, "team_members": team_members}
