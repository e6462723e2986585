"""The base of every /v1 view: key auth, scope, rate limit, org scoping, idempotent writes, and the response envelopes.

DRF's defaults (settings: `DEFAULT_AUTHENTICATION_CLASSES`, `DEFAULT_PERMISSION_CLASSES`, `DEFAULT_THROTTLE_CLASSES`)
name this package's authenticator, scope permission and rate limit; POST and PATCH go through `idempotency.wrap`.
Every app's API builds on these views.
"""

from django.http import Http404
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import NotFound
from orgs.tenancy import get_for_org, scoped

from .idempotency import wrap as idempotent
from .pagination import PageParams, paginate, paginate_items
from .serializers import InputValidation
from .throttling import rate_limit_headers


class OrgAPIView(InputValidation, APIView):
    """Auth first and alone; then scope; then the per-key rate limit; then the handler.

    Subclasses read through `self.org`, which comes from the key and nothing else. `model` with
    `get_queryset()`/`get_object()` give the org-scoped lookups; another org's id is a plain 404.
    """

    # authentication_classes, permission_classes and throttle_classes: DRF's defaults, from settings (the key
    # authenticator alone, the scope permission, the per-key rate limit).
    model = None

    @property
    def org(self):
        """The key's organization seen through the key's `location_ids` (orgs.tenancy.scoped): every `for_org`,
        `get_for_org`, selector and service given it stays within the key's locations."""
        org = getattr(self, "_scoped_org", None)
        if org is None:
            key = self.request.auth
            org = self._scoped_org = scoped(key.organization, getattr(key, "location_ids", None))
        return org

    @property
    def api_key(self):
        return self.request.auth

    def get_queryset(self):
        return self.model.objects.for_org(self.org)

    def get_object(self, pk, queryset=None):
        """This org's row with this id (from `queryset`, else `get_queryset()`), or NotFound (orgs.tenancy)."""
        return get_for_org(queryset if queryset is not None else self.get_queryset(), self.org, pk)

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)  # authentication, scope, rate limit
        method = request.method.lower()
        if method in ("post", "patch") and hasattr(self, method):
            setattr(self, method, idempotent(self, request, getattr(self, method)))

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        for header, value in rate_limit_headers(request).items():
            response[header] = value
        return response

    def handle_exception(self, exc):
        if isinstance(exc, Http404):
            exc = NotFound()
        return super().handle_exception(exc)


def data_response(data, status=200, **extra) -> Response:
    return Response({"data": data, **extra}, status=status)


def list_response(rows, has_more: bool, next_cursor: str | None) -> Response:
    return Response({"data": rows, "has_more": has_more, "next_cursor": next_cursor})


def item_list_response(queryset, params: dict, *, item, time_field="created_at", scope="") -> Response:
    """A page whose items PostgreSQL builds (`item`, from core.sqljson.model_item): see `paginate_items`."""
    return Response(paginate_items(queryset, params, item=item, time_field=time_field, scope=scope))


class ListParams(PageParams):
    """Query parameters of a plain list endpoint; subclasses add their filters. Unknown parameters are refused, and
    so is an empty value (`?limit=`), which DRF would otherwise take for an absent one."""

    def to_internal_value(self, data):
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({name: ["Unknown query parameter."] for name in unknown})
        blank = [name for name in data if data[name] == "" and not getattr(self.fields[name], "allow_blank", False)]
        if blank:
            raise serializers.ValidationError({name: ["This parameter may not be empty."] for name in blank})
        return super().to_internal_value(data)

    @classmethod
    def filters(cls, params: dict) -> dict:
        """The filters of a validated query by name, absent ones None: every parameter but the page's (with any a
        subclass's `to_internal_value` adds). A list and its export (api.exports) hand them to the same
        selector, so a filter is defined once."""
        paging = PageParams._declared_fields
        return {**{name: None for name in cls._declared_fields if name not in paging},
                **{name: value for name, value in params.items() if name not in paging}}


__all__ = ["OrgAPIView", "ListParams", "data_response", "item_list_response", "list_response", "paginate"]
