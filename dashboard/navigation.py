"""The dashboard's navigation, in one place. A new page adds one `NavItem` here.

`match` lists URL-name prefixes that make an item current (e.g. "api-key" covers the list, create,
created and revoke pages). `admin_only` hides an item from members (the views still enforce it).
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class NavItem:
    label: str
    url_name: str
    match: tuple[str, ...] = ()
    admin_only: bool = False


@dataclass(frozen=True)
class NavSection:
    title: str | None
    items: tuple[NavItem, ...] = field(default_factory=tuple)


NAV: tuple[NavSection, ...] = (
    NavSection(None, (NavItem("Overview", "dashboard:home", match=("home",)),)),
    NavSection(
        "Settings",
        (
            NavItem("Organization", "dashboard:settings-organization", match=("settings-organization",)),
            NavItem("API keys", "dashboard:api-keys", match=("api-key",)),
            NavItem("Members", "dashboard:members", match=("member",)),
        ),
    ),
)
