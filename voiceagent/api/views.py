"""The base of every /v1 view: key auth, scope, rate limit, org scoping, and the response envelopes."""

from django.http import Http404
from rest_framework import permissions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from orgs.tenancy import get_for_org
from voiceagent.errors import NotFound

from . import idempotency
from .authentication import ApiKeyAuthentication
from .pagination import PageParams, paginate, paginate_items
from .permissions import HasScope
from .throttling import KeyRateThrottle, rate_limit_headers


class OrgAPIView(APIView):
    """Auth first and alone; then scope; then the per-key rate limit; then the handler.

    Subclasses read through `self.org`, which comes from the key and nothing else. `model` with
    `get_queryset()`/`get_object()` give the org-scoped lookups; another org's id is a plain 404.
    """

    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [HasScope]
    throttle_classes = [KeyRateThrottle]
    model = None

    @property
    def org(self):
        return self.request.auth.organization

    @property
    def api_key(self):
        return self.request.auth

    def get_queryset(self):
        return self.model.objects.for_org(self.org)

    def get_object(self, pk, queryset=None):
        """This org's row with this id (from `queryset`, else `get_queryset()`), or NotFound (orgs.tenancy)."""
        return get_for_org(queryset if queryset is not None else self.get_queryset(), self.org, pk)

    def validate_query(self, serializer_class) -> dict:
        serializer = serializer_class(data=self.request.query_params)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def validate_body(self, serializer_class, *, partial: bool | None = None, **kwargs) -> dict:
        if partial is None:
            partial = self.request.method == "PATCH" and getattr(serializer_class, "partial_on_patch", True)
        serializer = serializer_class(data=self.request.data, partial=partial, **kwargs)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)  # authentication, scope, rate limit
        method = request.method.lower()
        if method in ("post", "patch") and hasattr(self, method):
            setattr(self, method, idempotency.wrap(self, request, getattr(self, method)))

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        for header, value in rate_limit_headers(request).items():
            response[header] = value
        return response

    def handle_exception(self, exc):
        if isinstance(exc, Http404):
            exc = NotFound()
        return super().handle_exception(exc)


class IsKeyed(permissions.BasePermission):
    def has_permission(self, request, view):
        return request.auth is not None  # without a key DRF answers 401, the authenticator being there


class UnknownEndpointView(OrgAPIView):
    """Every /v1 path no route matches, whatever the method: authenticated and counted like any keyed request, then
    404, so an unknown path tells nothing to a caller without a key (401) and carries the RateLimit headers."""

    permission_classes = [IsKeyed]
    schema = None

    def initial(self, request, *args, **kwargs):
        APIView.initial(self, request, *args, **kwargs)
        raise NotFound()


def data_response(data, status=200, **extra) -> Response:
    return Response({"data": data, **extra}, status=status)


def list_response(rows, has_more: bool, next_cursor: str | None) -> Response:
    return Response({"data": rows, "has_more": has_more, "next_cursor": next_cursor})


def item_list_response(queryset, params: dict, *, item, time_field="created_at", scope="") -> Response:
    """A page whose items PostgreSQL builds (`item`, from voiceagent.sqljson.model_item): see `paginate_items`."""
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


__all__ = ["OrgAPIView", "ListParams", "data_response", "item_list_response", "list_response", "paginate"]
