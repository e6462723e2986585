"""What the knowledge tests read back: the organization's knowledge version, and the API's timestamp form."""

import re

from orgs.models import Organization

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def knowledge_version(org: Organization) -> int:
    """The version as stored now (an `org` object in memory may be older)."""
    return Organization.objects.values_list("knowledge_version", flat=True).get(pk=org.pk)
