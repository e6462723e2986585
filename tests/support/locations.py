"""Locations and what is limited to them (docs/api.md#locations-and-scope): the one way a test makes a location,
and a `/v1` client whose key is limited to some."""

from knowledge.services import location_create
from tests.support.clients import org_client


def make_location(org, name: str, *, phone_number: str = "+12125550100", timezone: str = "UTC"):
    """A location of `org` through the real service (which bumps the knowledge version)."""
    return location_create(org=org, name=name, address="1 Main St", timezone=timezone, phone_number=phone_number)


def limited_client(org, location_ids, *, admin=None, scope: str = "read_write", name: str = "Limited key"):
    """A `/v1` client whose key of `org` is limited to `location_ids`, its first request already made (so its
    `last_used_at` write is behind a test that counts rows or queries)."""
    return org_client(org, scope, admin=admin, name=name, location_ids=list(location_ids), settle=True)
