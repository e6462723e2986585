"""Org-scoped reads of organizations, memberships, keys and the knowledge base."""

import functools

from django.contrib.auth import get_user_model
from django.db import connection

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


def user_id_for_username(username: str) -> int | None:
    """The id of the user that logs in as `username` (exact, as ModelBackend looks it up), or None."""
    return get_user_model().objects.filter(username=username).values_list("pk", flat=True).first()


def location_list(*, org):
    """The org's locations, for cursor pagination (newest first). One query per page."""
    return Location.objects.for_org(org)


def fact_list(*, org):
    return Fact.objects.for_org(org)


def team_member_list(*, org):
    return TeamMember.objects.for_org(org)


def knowledge_version(org) -> int:
    """The org's `knowledge_version`, read fresh (one query): every write the runtime reads bumps it in its own
    transaction (orgs.services.knowledge_version_bump: facts, locations, team members; escalation rules and
    calendars in calls/)."""
    return Organization.objects.filter(pk=org.pk).values_list("knowledge_version", flat=True).get()


def knowledge_etag(org, version: int | None = None) -> str:
    """The one ETag of the agent runtime's knowledge: `"knowledge-<version>.<org updated_at in ms>"`.

    The version covers the knowledge rows; the org's own `updated_at` covers its settings, which the runtime's
    knowledge also carries. `updated_at` is taken from `org` as loaded, i.e. the settings the caller serves.
    Without `version` it is read fresh (one query), so an unchanged knowledge base answers 304 without loading it.
    """
    if version is None:
        version = knowledge_version(org)
    return f'"knowledge-{version}.{int(org.updated_at.timestamp() * 1000)}"'


def knowledge_for_org(org) -> tuple[str, dict]:
    """What the agent runtime answers from: (etag, {"version", "facts", "locations", "team_members"}).

    The ETag is `knowledge_etag`. The version is read BEFORE the rows: under READ COMMITTED the rows are then at
    least that new, so an ETag never labels older data (at worst newer data carries the older tag, and the next
    read fetches again). Items have the public /v1 shapes. calls.selectors.runtime_knowledge adds escalation
    rules, calendars and the org's settings under the same ETag.
    """
    version = knowledge_version(org)
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
    data = {"version": version, "facts": facts, "locations": locations, "team_members": team_members}
    return knowledge_etag(org, version), data


def active_api_key_for_digest(digest: str):
    """The active key with this digest, its organization attached, in one indexed lookup; or None."""
    row = active_api_key_row(digest)
    return None if row is None else api_key_from_row(row)


def active_api_key_row(digest: str) -> tuple[list, list] | None:
    """The converted column values of the active key with this digest and of its organization, or None: what
    `api_key_from_row` builds instances from.

    Authentication runs this on every /v1 request whose key is not cached, so it skips the ORM's per-call SQL
    compilation (about 0.5 ms, more than the query itself): the SQL and the column converters are built once per
    database alias.
    """
    plan = _api_key_lookup_plan(connection.alias)
    with connection.cursor() as cursor:
        cursor.execute(plan.sql, [digest])
        row = cursor.fetchone()
    if row is None:
        return None
    return plan.convert(plan.key_converters, row[: plan.split]), plan.convert(plan.org_converters, row[plan.split :])


def api_key_from_row(row: tuple[list, list]):
    """An ApiKey with its Organization attached, from `active_api_key_row`'s values."""
    plan = _api_key_lookup_plan(connection.alias)
    key = ApiKey.from_db(connection.alias, plan.key_attnames, row[0])
    key.organization = Organization.from_db(connection.alias, plan.org_attnames, row[1])
    return key


class _LookupPlan:
    def __init__(self):
        quote = connection.ops.quote_name
        key_fields, org_fields = ApiKey._meta.concrete_fields, Organization._meta.concrete_fields
        columns = [f"k.{quote(f.column)}" for f in key_fields] + [f"o.{quote(f.column)}" for f in org_fields]
        # Identifiers come from the models' metadata; the digest is a bound parameter.
        self.sql = (
            f"SELECT {', '.join(columns)} FROM {quote(ApiKey._meta.db_table)} k "  # noqa: S608
            f"JOIN {quote(Organization._meta.db_table)} o ON o.{quote('id')} = k.{quote('organization_id')} "
            f"WHERE k.{quote('key_digest')} = %s AND k.{quote('revoked_at')} IS NULL"
        )
        self.split = len(key_fields)
        self.key_attnames = [f.attname for f in key_fields]
        self.org_attnames = [f.attname for f in org_fields]
        self.key_converters = [self._converters(f) for f in key_fields]
        self.org_converters = [self._converters(f) for f in org_fields]

    @staticmethod
    def _converters(field):
        expression = field.get_col(field.model._meta.db_table)
        return expression, connection.ops.get_db_converters(expression) + field.get_db_converters(connection)

    @staticmethod
    def convert(converters, values):
        converted = []
        for (expression, functions), value in zip(converters, values, strict=True):
            for function in functions:
                value = function(value, expression, connection)
            converted.append(value)
        return converted


@functools.cache
def _api_key_lookup_plan(alias: str) -> _LookupPlan:
    return _LookupPlan()
