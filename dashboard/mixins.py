"""The dashboard's one way in: who is asking, for which organization, and whether they may do this.

Every dashboard page is a class-based view built on `OrgMixin` (or `AdminRequiredMixin`, which is
`OrgMixin` plus the admin rule). The organization always comes from the signed-in user's membership,
resolved from the session; never from the URL or the form. Objects are looked up with
`orgs.tenancy.get_for_org(..., self.org, pk)`, whose `NotFound` this mixin renders as the 404 page, so another
organization's id is the same 404 as a missing one and no page converts it by hand.
"""

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import Http404
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils import timezone

from core.errors import Forbidden, NotFound
from orgs.models import Membership, Organization
from orgs.selectors import membership_for_user
from orgs.tenancy import scoped

from . import once

SESSION_ORG_KEY = "dashboard.org_id"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


def is_admin_method(method: str, admin_methods) -> bool:
    """Whether `method` is one of `admin_methods`, where every unsafe method counts as a write: PUT, PATCH, DELETE
    and any method Django does not know are checked as POST, so a view that refuses a member's POST refuses them
    all (Django's FormView answers PUT with `post()`), before any view code runs."""
    method = method.upper()
    return (method if method in SAFE_METHODS else "POST") in admin_methods


def remember_org(request, org: Organization) -> None:
    """Makes `org` the session's current organization (after sign-up, log-in or a switch)."""
    request.session[SESSION_ORG_KEY] = str(org.pk)


def resolve_membership(request) -> Membership | None:
    """The current membership: the session's organization if the user still belongs to it, else their oldest.
    Sets `request.org_lost` when the session named an organization the user no longer belongs to."""
    org_id = request.session.get(SESSION_ORG_KEY)
    membership = membership_for_user(user=request.user, org_id=org_id) if org_id else None
    request.org_lost = bool(org_id) and membership is None
    if membership is None:
        # The session's org is gone or the user was removed from it: fall back rather than lock them out.
        membership = membership_for_user(user=request.user)
        if membership is not None:
            remember_org(request, membership.organization)
        else:
            request.session.pop(SESSION_ORG_KEY, None)
    return membership


def error_page(request, status: int, template: str | None = None) -> TemplateResponse:
    """The dashboard's 403/404 pages. One template per status, so a hidden object and a missing one look alike."""
    return TemplateResponse(request, template or f"dashboard/errors/{status}.html", status=status)


class OrgMixin:
    """Resolves the signed-in user's current membership and exposes it as `self.org` / `request.org` and
    `self.membership` / `request.membership`. Anonymous users go to the log-in page.

    `admin_methods` lists the HTTP methods only an org admin may use (empty here; see `AdminRequiredMixin`); "POST"
    there stands for every unsafe method (`is_admin_method`).
    A `Forbidden` raised by a service (e.g. `require_admin`) renders the same 403 page, and a `NotFound` (e.g. from
    `get_for_org` or a service) or Django's `Http404` the dashboard's 404 page.
    """

    admin_methods: tuple[str, ...] = ()
    # A page of the organization as a whole, which a member limited to locations neither reads nor changes.
    whole_org_only = False
    # Knowledge pages: a location manager may use `admin_methods` too; the scope then decides what it may change
    # (the services' check_writable: its own locations' rows, never the location-less ones).
    location_manager_writes = False
    # The page that shows a secret once (see once.py) sets this; every other page drops a pending secret.
    shows_secret_once = False
    org: Organization
    membership: Membership

    def dispatch(self, request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        membership = resolve_membership(request)
        if request.org_lost:
            # Removed from the organization this page (or this form) belongs to: the request is refused, whatever
            # its method, and never carried over to another of the user's organizations.
            messages.error(request, "You no longer have access to that organization.")
            return redirect("dashboard:home") if membership is not None else error_page(
                request, 403, "dashboard/errors/no_org.html"
            )
        if membership is None:
            return error_page(request, 403, "dashboard/errors/no_org.html")
        if not self.shows_secret_once:
            once.discard(request)
        self.membership = request.membership = membership
        self.org = request.org = scoped(membership.organization, membership.location_ids)
        allowed = membership.writes_knowledge if self.location_manager_writes else membership.is_admin
        if is_admin_method(request.method, self.admin_methods) and not allowed:
            return error_page(request, 403)
        if self.whole_org_only and membership.location_ids is not None:
            return error_page(request, 403)
        # Every time on the page, and every day a form or a count starts, is the organization's (the API stays
        # UTC). A TemplateResponse renders after dispatch returns, so it renders here, while the zone is active.
        with timezone.override(self.org.zone):
            response = self._dispatch_in_zone(request, *args, **kwargs)
            if hasattr(response, "render") and not response.is_rendered:
                response.render()
        return response

    def _dispatch_in_zone(self, request, *args, **kwargs):
        try:
            return super().dispatch(request, *args, **kwargs)
        except (NotFound, Http404):
            return error_page(request, 404)
        except Forbidden:
            return error_page(request, 403)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        membership = self.membership
        context.update(org=self.org, membership=membership, is_admin=membership.is_admin,
                       limited=membership.location_ids is not None,
                       writes_knowledge=membership.writes_knowledge)
        return context


class AdminRequiredMixin(OrgMixin):
    """Only org admins may use this view: members get the 403 page and nothing happens.

    By default every method is admin-only. A page that members may read but only admins may change
    sets `admin_methods = ("POST",)`: every write (PUT, PATCH, DELETE too) is then admin-only.
    """

    admin_methods = ("GET", "HEAD", "OPTIONS", "POST")
