"""Field validators shared by the services that clean plain values (the knowledge base, contacts).

Each raises ValidationFailed with the `fieldErrors` shape of docs/api.md#errors and the same messages as the API's
serializers, so a service called from the dashboard reports a field exactly as the API would.
"""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email

from core.errors import ValidationFailed


def optional_text(value) -> str | None:
    """Optional text, stripped; blank is stored as null, so the API shows `null` rather than `""`."""
    if value is None:
        return None
    value = str(value).strip()
    return value or None


def check_lengths(values: dict, caps: dict[str, int]) -> None:
    """Every string in `values` whose field has a cap in `caps` must fit it (docs/api.md#limits per-field caps)."""
    errors = {
        field: [f"Ensure this field has no more than {caps[field]} characters."]
        for field, value in values.items()
        if field in caps and isinstance(value, str) and len(value) > caps[field]
    }
    if errors:
        raise ValidationFailed(field_errors=errors)


def check_email(value: str | None, *, field: str = "email") -> None:
    """None passes (the field is optional); anything else must be a valid address."""
    if value is None:
        return
    try:
        validate_email(value)
    except DjangoValidationError:
        raise ValidationFailed(field_errors={field: ["Enter a valid email address."]}) from None
