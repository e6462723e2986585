"""Template tags for the dashboard layout: the sidebar navigation and the organization switcher."""

from datetime import timedelta

from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.timesince import timesince

from orgs.models import Membership
from orgs.tenancy import location_ids_of, rule_of
from webhooks.ssrf import masked_url

from ..navigation import NAV

register = template.Library()


@register.filter
def changeable(row, request) -> bool:
    """Whether the signed-in member may change this knowledge row: an admin any, a location manager those its
    scope may write (its own locations', never the location-less ones), a member none. Only shows the controls:
    the views and services decide."""
    membership = getattr(request, "membership", None)
    if membership is None or not membership.writes_knowledge:
        return False
    location_ids = location_ids_of(request.org)
    return location_ids is None or rule_of(type(row)).writable(row, location_ids)


@register.inclusion_tag("dashboard/partials/nav.html", takes_context=True)
def dashboard_nav(context):
    request = context["request"]
    membership = getattr(request, "membership", None)
    is_admin = bool(membership and membership.is_admin)
    limited = bool(membership and membership.location_ids is not None)
    org = membership.organization if membership else None
    match = getattr(request, "resolver_match", None)
    current = match.url_name or "" if match else ""
    current_view = match.view_name or "" if match else ""  # "meetings:list": other apps' pages
    sections = []
    for section in NAV:
        items = [
            {
                "label": item.label,
                "url": reverse(item.url_name),
                "current": current.startswith(item.match) or current_view.startswith(item.match),
            }
            for item in section.items
            if (is_admin or not item.admin_only) and not (limited and item.whole_org)
            and (item.condition is None or (org and item.condition(org)))
        ]
        if items:
            sections.append({"title": section.title, "items": items})
    return {"sections": sections}


@register.inclusion_tag("dashboard/partials/org_switcher.html", takes_context=True)
def org_switcher(context):
    """The current organization's name, and a switcher when the user belongs to more than one."""
    request = context["request"]
    membership = getattr(request, "membership", None)
    others = []
    if membership is not None:
        others = list(
            Membership.objects.filter(user=request.user)
            .exclude(pk=membership.pk)
            .select_related("organization")
            .order_by("organization__name")
        )
    return {"membership": membership, "others": others, "csrf_token": context.get("csrf_token")}


@register.filter
def ago(value):
    """ "just now" under a minute, else "3 hours ago" (Django's timesince, which says "0 minutes" otherwise)."""
    if not value:
        return ""
    if timezone.now() - value < timedelta(minutes=1):
        return "just now"
    return f"{timesince(value)} ago"


@register.filter
def endpoint(url: str, is_admin) -> str:
    """A webhook URL as the reader may see it: whole for an admin, else its scheme and host only
    (webhooks.ssrf.masked_url: a receiver's path or query often carries a token)."""
    return url if is_admin else masked_url(url)
