"""Org-scoped reads of contacts."""

import re

from django.db.models import Q

from .models import Contact

# A search that looks like (part of) a phone number also matches phone digits; "john2" does not.
PHONE_LIKE = re.compile(r"^[\d\s+().\-]+$")


def contact_list(*, org, search: str | None = None):
    """The org's contacts, optionally matching `search` (the caller paginates):

    - a search that looks like a phone number (digits and `+ - ( ) .` or spaces only) matches phone numbers by
      digits ("(415) 555" finds +14155550100) and emails containing it ("1985" finds john1985@...);
    - any other search matches name or email containing it, case-insensitively.

    A phone-like search skips names: no name is made of digits, and skipping it saves an index scan. On
    PostgreSQL every branch is served by a pg_trgm GIN index (contacts migrations 0001 and 0002).
    """
    contacts = Contact.objects.for_org(org)
    search = (search or "").strip()
    if not search:
        return contacts
    digits = "".join(ch for ch in search if ch.isdigit())
    if digits and PHONE_LIKE.match(search):
        condition = Q(phone_digits__contains=digits) | Q(email__icontains=search)
    else:
        condition = Q(name__icontains=search) | Q(email__icontains=search)
    return contacts.filter(condition)
