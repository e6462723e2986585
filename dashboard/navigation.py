"""The dashboard's navigation, in one place. A new page adds one `NavItem` here.

`match` lists URL-name prefixes that make an item current (e.g. "api-key" covers the list, create,
created and revoke pages); a prefix with a colon ("meetings:") matches another app's namespaced URL names.
`admin_only` hides an item from members (the views still enforce it); `whole_org` hides it from members limited to
locations (location managers), for whom those pages are the 403 page (mixins.OrgMixin.whole_org_only).
`condition`, given the current organization, hides an item when false (e.g. Meetings without the meetings product).
"""

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class NavItem:
    label: str
    url_name: str
    match: tuple[str, ...] = ()
    admin_only: bool = False
    whole_org: bool = False
    condition: Callable | None = None


def meetings_enabled(org) -> bool:
    return bool(org.meetings_enabled)


@dataclass(frozen=True)
class NavSection:
    title: str | None
    items: tuple[NavItem, ...] = field(default_factory=tuple)


NAV: tuple[NavSection, ...] = (
    NavSection(
        None,
        (
            NavItem("Overview", "dashboard:home", match=("home",)),
            NavItem("Calls", "dashboard:calls", match=("call",)),
            NavItem("Analytics", "dashboard:analytics", match=("analytics",)),
            NavItem("Inbox", "dashboard:inbox", match=("inbox",)),
            NavItem("Alerts", "dashboard:alerts", match=("alert",)),
            NavItem("Bookings", "dashboard:bookings", match=("booking",)),
        ),
    ),
    NavSection(
        "Your line",
        (
            NavItem("Contacts", "dashboard:contacts", match=("contact",)),
            NavItem("Knowledge base", "dashboard:knowledge", match=("knowledge",)),
            NavItem("Locations", "dashboard:locations", match=("location",)),
            NavItem("Team", "dashboard:team", match=("team",)),
            NavItem("Meetings", "meetings:list", match=("meetings:",), condition=meetings_enabled, whole_org=True),
        ),
    ),
    NavSection(
        "Settings",
        (
            NavItem("Organization", "dashboard:settings-organization", match=("settings-organization",),
                    whole_org=True),
            NavItem("API keys", "dashboard:api-keys", match=("api-key",), whole_org=True),
            NavItem("Redaction", "dashboard:settings-redaction", match=("settings-redaction",), admin_only=True,
                    whole_org=True),
            NavItem("Escalation rules", "dashboard:escalation-rules", match=("escalation-rule",)),
            NavItem("Call fields", "dashboard:settings-call-fields", match=("settings-call-field",)),
            NavItem("Calendars", "dashboard:calendars", match=("calendar",)),
            NavItem("Webhooks", "dashboard:webhooks", match=("webhook",)),
            NavItem("Events", "dashboard:events", match=("events",)),
            NavItem("Notifications", "dashboard:notifications", match=("notification",), whole_org=True),
            NavItem("Members", "dashboard:members", match=("member",)),
            NavItem("Data & privacy", "dashboard:settings-privacy", match=("settings-privacy",), admin_only=True,
                    whole_org=True),
            NavItem("Audit log", "dashboard:audit-log", match=("audit-log",), admin_only=True, whole_org=True),
        ),
    ),
)
