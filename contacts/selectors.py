"""Org-scoped reads of contacts."""

import re

from django.db.models import Q

from .models import Contact

# A search that looks like (part of) a phone number also matches phone digits; "john2" does not.
PHONE_LIKE = re.compile(r"^[\d\s+().\-]+$")


def contact_list(*, org, search: str | None = None):
    """The org's contacts, optionally matching `search`: name or email containing it (case-insensitive), or,
    when it looks like a phone number, phone digits containing its digits ("(415) 555" finds +14155550100).

    On PostgreSQL each branch is served by a pg_trgm GIN index (contacts migration 0001); the caller paginates.
    """
    contacts = Contact.objects.for_org(org)
    search = (search or "").strip()
    if search:
        condition = Q(name__icontains=search) | Q(email__icontains=search)
        digits = "".join(ch for ch in search if ch.isdigit())
        if digits and PHONE_LIKE.match(search):
            condition |= Q(phone_digits__contains=digits)
        contacts = contacts.filter(condition)
    return contacts
