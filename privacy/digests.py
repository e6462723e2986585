"""A caller's number as privacy keeps it: a keyed digest (HMAC-SHA256 under the server's secret, per organization, so
two organizations' digests of one number differ and a leaked table cannot be reversed by hashing every number), and
a masked form a person recognises (`+1•••••••0100`)."""

import phonenumbers
from django.utils.crypto import salted_hmac

SALT = "privacy.phone_number"


def phone_digest(org_id, e164: str) -> str:
    return salted_hmac(SALT, f"{org_id}:{e164}", algorithm="sha256").hexdigest()


def masked(e164: str) -> str:
    """The country code and the last four digits: `+14155550100` -> `+1•••••••0100`."""
    try:
        code = str(phonenumbers.parse(e164).country_code)
    except phonenumbers.NumberParseException:
        code = ""
    digits = e164.lstrip("+")
    rest = digits[len(code):]
    return f"+{code}" + "•" * max(len(rest) - 4, 0) + rest[-4:]
