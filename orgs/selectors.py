"""Org-scoped reads of organizations, memberships and keys."""

import functools

from django.contrib.auth import get_user_model
from django.db import connection

from .models import ApiKey, Membership, Organization


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


def user_id_for_username(username: str) -> int | None:
    """The id of the user that logs in as `username` (exact, as ModelBackend looks it up), or None."""
    return get_user_model().objects.filter(username=username).values_list("pk", flat=True).first()


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
