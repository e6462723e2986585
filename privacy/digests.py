"""A caller's number as privacy keeps it: a keyed digest (HMAC-SHA256 under the server's secret, per organization, so
two organizations' digests of one number differ and a leaked table cannot be reversed by hashing every number), and
a masked form a person recognises (`+1•••••••0100`)."""

import phonenumbers
from django.utils.crypto import salted_hmac

SALT = "privacy.phone_number"


def phone_digest(org_id, e164: str) -> str:
    return salted_hmac(SALT, f"{org_id}:{e164}", algorithm="sha256").hexdigest()


def masked(e164: str) -> str:
    """The country code and the last four digits, one bullet for each other digit of the whole number (so the mask
    says how long it is): `+14155550100` -> `+1•••••••0100`."""
    try:
        code = str(phonenumbers.parse(e164).country_code)
    except phonenumbers.NumberParseException:
        code = ""
    digits = e164.lstrip("+")
    return f"+{code}" + "•" * max(len(digits) - 4, 0) + digits[-4:]
