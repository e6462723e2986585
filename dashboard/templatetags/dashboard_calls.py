"""Filters of the calls, overview and inbox pages: money in cents, and the badge style of a score or status."""

from django import template

register = template.Library()


@register.filter
def cents(value):
    """1450 -> "$14.50" (the demo catalog is in dollars; orders carry no currency of their own yet)."""
    if value is None or value == "":
        return ""
    value = int(value)
    sign = "−" if value < 0 else ""
    return f"{sign}${abs(value) // 100:,}.{abs(value) % 100:02d}"


@register.filter
def score_style(score):
    """The badge modifier for a 0..100 quality score."""
    if score is None:
        return "muted"
    return "success" if score >= 80 else "warning" if score >= 50 else "danger"


ORDER_STATUS_STYLES = {"new": "info", "in_progress": "warning", "fulfilled": "success", "canceled": "muted"}


@register.filter
def order_status_style(status):
    return ORDER_STATUS_STYLES.get(status, "muted")


@register.filter
def outcome_label(outcome):
    """ "order_canceled" -> "Order canceled"."""
    return str(outcome).replace("_", " ").capitalize() if outcome else ""


_REDACTION_KINDS = {"card_number": "card number", "government_id": "government id", "bank_account": "bank account",
                    "email": "e-mail address", "phone_number": "phone number", "date_of_birth": "date of birth"}


@register.filter
def redaction_kind(kind):
    """ "card_number" -> "card number" (the call page's note on what was redacted)."""
    return _REDACTION_KINDS.get(kind, str(kind).replace("_", " "))
