"""Per-organization count quotas (docs/api.md#quotas): what one tenant may hold of what all of them share.

A count quota is checked and the row it counts is written in one transaction that holds the organization's row
lock (FOR NO KEY UPDATE: it serializes quota checks of one organization, while other writes that merely point at
the organization go on), so two concurrent creations cannot both see the last free place.
"""

from django.conf import settings

from core.errors import Conflict

from .models import ApiKey, Organization


def lock_organization(org) -> None:
    """Holds the organization's row until the transaction ends. Assumes a transaction is open."""
    list(Organization.objects.select_for_update(no_key=True).filter(pk=org.pk).values_list("pk", flat=True))


def check_count(*, field: str, used: int, limit: int, what: str, setting: str, free: str) -> None:
    """Conflict (`details.field` = `field`) when `used` has reached `limit`."""
    if used >= limit:
        raise Conflict(field, f"This organization has {used} {what}, the most it may have ({setting} = {limit}). "
                              f"{free}")


def check_api_keys(org) -> None:
    """Before a key is created, under `lock_organization`: revoked keys do not count."""
    check_count(
        field="api_keys", used=ApiKey.objects.filter(organization=org, revoked_at__isnull=True).count(),
        limit=settings.QUOTA_API_KEYS_PER_ORG, what="active API keys", setting="QUOTA_API_KEYS_PER_ORG",
        free="Revoke a key to create another.",
    )
