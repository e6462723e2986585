"""Tenancy in one place: every org-owned row is reached through `for_org(org)`, one row by its id through
`get_for_org` (a malformed id, a missing one and another organization's are the same `NotFound`).

`org` may be an organization seen through a scope (`scoped(org, location_ids)`): the same
Organization, carrying `scope_location_ids`, the locations a key or a member is limited to (docs/api.md). Every
`for_org` then narrows to what belongs to those locations, by the rule the model declares (`location_rule`), so a
view, a selector and a service that take `org` keep the scope without knowing about it. A model that declares no
rule cannot be read through a limited scope at all (ImproperlyConfigured): no row is ever shown by omission.
"""

import copy
import uuid
from collections.abc import Callable, Iterable

from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.db import models
from django.db.models import Q

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

    `rows` is a model or a queryset (for `select_related` and the like); it is narrowed with `for_org(org)` here,
    so no caller can forget it. A malformed id, a missing id and another org's id fail identically
    (docs/api.md#errors: the same 404 for what does not exist and what belongs to someone else). `org` may carry a
    scope (`scoped`): a row outside it is that same 404. The row comes back with `org` as its `organization`, so a
    service given the row alone acts within the scope it was read through.
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


class LocationRule:
    """How a model's rows reach a location: `visible(ids)` narrows a queryset, `writable(row, ids)` says whether a
    principal limited to `ids` may change (or create) a row it can see."""

    what = "rows of this kind"

    def visible(self, location_ids: frozenset) -> Q:
        raise NotImplementedError

    def writable(self, row, location_ids: frozenset) -> bool:
        return True


class AtLocation(LocationRule):
    """Rows at a location (`path`: the lookup to the location, e.g. `location` or `call__location`). With
    `shared_when_null`, a row without a location applies to every location: seen by all, changed by the whole
    organization only."""

    def __init__(self, path: str, *, shared_when_null: bool = False, what: str = ""):
        self.path, self.shared_when_null, self.what = path, shared_when_null, what or self.what

    def visible(self, location_ids):
        rows = Q(**{f"{self.path}__in": location_ids})
        return rows | Q(**{f"{self.path}__isnull": True}) if self.shared_when_null else rows

    def writable(self, row, location_ids):
        if "__" in self.path:
            return True  # a row reached through another (an order through its call) is seen only at the scope's
        return getattr(row, f"{self.path}_id") in location_ids


class AtAnyOf(LocationRule):
    """Rows at a list of locations (`field`, an array of ids; null: every location): seen where the lists meet,
    changed only when every location the row names is the scope's."""

    def __init__(self, field: str, *, what: str):
        self.field, self.what = field, what

    def visible(self, location_ids):
        return Q(**{f"{self.field}__isnull": True}) | Q(**{f"{self.field}__overlap": list(location_ids)})

    def writable(self, row, location_ids):
        named = getattr(row, self.field)
        return named is not None and set(named) <= location_ids


class ReadOnlyWithin(LocationRule):
    """Rows a limited principal may read (`visible`) but never change or create: locations themselves, team members."""

    def __init__(self, visible: Callable[[frozenset], Q], *, what: str):
        self._visible, self.what = visible, what

    def visible(self, location_ids):
        return self._visible(location_ids)

    def writable(self, row, location_ids):
        return False


class Matching(LocationRule):
    """Rows visible, and writable, by a condition on the scope's locations (a contact with a call at one of them)."""

    def __init__(self, visible: Callable[[frozenset], Q], *, what: str = ""):
        self._visible, self.what = visible, what or self.what

    def visible(self, location_ids):
        return self._visible(location_ids)


class Nowhere(LocationRule):
    """Rows of the organization as a whole that a limited principal neither reads nor changes (keys, members,
    invitations, meetings)."""

    def __init__(self, *, what: str):
        self.what = what

    def visible(self, location_ids):
        return Q(pk__in=[])

    def writable(self, row, location_ids):
        return False


class Unlocated(LocationRule):
    """Rows no location narrows (what a service works with on the organization's behalf: outbox rows, the
    subscriptions an event is delivered to)."""

    def visible(self, location_ids):
        return Q()


def set_location_rule(model: type[models.Model], rule: LocationRule) -> None:
    """Declares `model`'s rule from a higher app's AppConfig.ready(), when the rule needs that app's models (a
    contact is at a location through the calls app's calls)."""
    model.location_rule = rule


def rule_of(model: type[models.Model]) -> LocationRule:
    rule = getattr(model, "location_rule", None)
    if rule is None:
        raise ImproperlyConfigured(f"{model.__name__} declares no location_rule: it cannot be read within a scope.")
    return rule


def check_writable(org, row, what: str | None = None) -> None:
    """ScopeForbidden when `org` is limited and its scope may not change (or create) `row`."""
    location_ids = location_ids_of(org)
    if location_ids is None:
        return
    rule = rule_of(type(row))
    if not rule.writable(row, location_ids):
        raise ScopeForbidden(what or rule.what, location_ids)


def check_whole_org(org, what: str) -> None:
    """ScopeForbidden when `org` is limited: for changes of the organization as a whole (its settings, keys)."""
    location_ids = location_ids_of(org)
    if location_ids is not None:
        raise ScopeForbidden(what, location_ids)


class OrgOwnedQuerySet(models.QuerySet):
    def for_org(self, org):
        rows = self.filter(organization=org)
        location_ids = location_ids_of(org)
        if location_ids is None:
            return rows
        return rows.filter(rule_of(self.model).visible(location_ids))


class OrgOwnedModel(models.Model):
    """Base for every model that belongs to one organization: a uuid id, the org, and `objects.for_org`.

    `location_rule` (a LocationRule) says how its rows reach a location; None: not readable within a scope."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey("orgs.Organization", on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = OrgOwnedQuerySet.as_manager()
    location_rule: LocationRule | None = None

    class Meta:
        abstract = True
