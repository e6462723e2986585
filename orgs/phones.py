"""Phone numbers in E.164, parsed by `phonenumbers` in an organization's default region."""

import phonenumbers

from core.errors import ValidationFailed

INVALID_MESSAGE = "Enter a valid phone number (E.164, or a national number of the organization's region)."


def normalize_phone(raw, *, region: str, field: str = "phone_number") -> str:
    """`raw` as E.164 ("+1 (415) 555-0100" in US -> "+14155550100"), or ValidationFailed on `field`."""
    if not isinstance(raw, str) or not raw.strip() or len(raw) > 32:
        raise ValidationFailed(field_errors={field: [INVALID_MESSAGE]})
    try:
        number = phonenumbers.parse(raw, region or "US")
    except phonenumbers.NumberParseException:
        raise ValidationFailed(field_errors={field: [INVALID_MESSAGE]}) from None
    if not phonenumbers.is_valid_number(number):
        raise ValidationFailed(field_errors={field: [INVALID_MESSAGE]})
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
