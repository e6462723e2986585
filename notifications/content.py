"""What each notification e-mail says: a subject, a plain-text body and an HTML body, from templates in
notifications/templates/notifications/ (`<name>.txt` renders with autoescape off, `<name>.html` with it on, so
a caller's words are shown as typed in the text part and can never become markup in the HTML part)."""

import re
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from django.conf import settings
from django.template.loader import render_to_string
from django.utils import timezone

from core.links import alert_url, call_url, webhook_subscription_url

from . import conf

UNKNOWN_CALLER = "Unknown caller"
WITHHELD = "withheld"


@dataclass(frozen=True)
class Content:
    subject: str
    text: str
    html: str


def _subject(text: str) -> str:
    """One line (a newline in a header is refused, and could inject one), at most SUBJECT_MAX_CHARS."""
    line = re.sub(r"\s+", " ", text).strip()
    return line if len(line) <= conf.SUBJECT_MAX_CHARS else line[: conf.SUBJECT_MAX_CHARS - 1] + "…"


def render(name: str, subject: str, context: dict) -> Content:
    context = {**context, "subject": _subject(subject), "dashboard_url": settings.DASHBOARD_URL}
    return Content(
        subject=context["subject"],
        text=render_to_string(f"notifications/{name}.txt", context),
        html=render_to_string(f"notifications/{name}.html", context),
    )


def _when(call) -> str:
    """The call's start in its location's time zone (the organization's without a location), e.g.
    "Nov 20, 2026, 12:00 America/Los_Angeles"."""
    zone_name = call.location.timezone if call.location_id else call.organization.time_zone
    try:
        zone = ZoneInfo(zone_name)
    except (KeyError, ValueError):
        zone_name, zone = "UTC", ZoneInfo("UTC")
    local = timezone.localtime(call.started_at, zone)
    return f"{local:%b} {local.day}, {local:%Y, %H:%M} {zone_name}"


def call_context(call) -> dict:
    contact = call.contact if call.contact_id else None
    return {
        "call": call,
        "call_link": call_url(call.pk),
        "caller": call.caller_name or (contact.name if contact and contact.name else None) or UNKNOWN_CALLER,
        "from_number": call.from_number or WITHHELD,
        "location": call.location.name if call.location_id else None,
        "started": _when(call),
    }


def callback_requested(callback, call) -> Content:
    context = call_context(call)
    window = callback.get_requested_window_display()
    if callback.custom_window:
        window = callback.custom_window if window == "Custom" else f"{window}: {callback.custom_window}"
    context.update(
        number=callback.callback_number or call.from_number or WITHHELD,
        window=window,
        reason=callback.reason or "(no reason given)",
        for_member=callback.requested_team_member.name if callback.requested_team_member_id else None,
    )
    return render("callback_requested", f"Callback requested: {context['caller']}, {context['number']}", context)


def message_taken(message, call) -> Content:
    context = call_context(call)
    caller = message.caller_name or context["caller"]
    context.update(
        caller=caller,
        number=message.callback_number or call.from_number or WITHHELD,
        for_member=message.for_team_member_name,
        message=message.message,
    )
    who = f" for {message.for_team_member_name}" if message.for_team_member_name else ""
    return render("message_taken", f"Message{who} from {caller}", context)


def escalation_triggered(escalation, call) -> Content:
    context = call_context(call)
    destination = (
        escalation.destination_team_member.name if escalation.destination_team_member_id else None
    ) or escalation.destination_phone
    context.update(
        number=call.from_number or WITHHELD,
        rule=escalation.rule_name,
        triggered_by=escalation.get_triggered_by_display(),
        destination=destination,
        reason=escalation.context or "(no context given)",
    )
    return render("escalation_triggered", f"Escalation: {escalation.rule_name} ({context['caller']})", context)


def webhook_disabled(subscription, reason: str) -> Content:
    return render("webhook_disabled", "Webhook endpoint disabled", {
        "subscription": subscription,
        "reason": reason,
        "link": webhook_subscription_url(subscription.pk),
    })


def webhook_failing(subscription, consecutive_failures: int) -> Content:
    return render("webhook_failing", "Webhook endpoint failing", {
        "subscription": subscription, "failures": consecutive_failures,
        "link": webhook_subscription_url(subscription.pk),
    })


def webhook_recovered(subscription) -> Content:
    return render("webhook_recovered", "Webhook endpoint recovered", {
        "subscription": subscription, "link": webhook_subscription_url(subscription.pk),
    })


def webhook_exhausted(delivery, subscription) -> Content:
    return render("webhook_exhausted", "Webhook event could not be delivered", {
        "subscription": subscription,
        "delivery": delivery,
        "link": webhook_subscription_url(subscription.pk),
    })


METRIC_WORDS = {
    "calls": "calls", "abandoned_calls": "abandoned calls", "callbacks_waiting": "callbacks waiting",
    "escalations_waiting": "escalations waiting", "unanswered_question_rate": "unanswered questions per call",
    "webhook_failure_rate": "webhook failure rate", "line_silent": "calls (line silent)",
}


def alert(alert, *, rule_name: str, location_name: str | None, resolved: bool) -> Content:
    where = location_name or "the whole organization"
    state = "Resolved" if resolved else "Alert"
    return render("alert", f"{state}: {rule_name} ({where})", {
        "alert": alert, "rule_name": rule_name, "where": where, "resolved": resolved,
        "metric": METRIC_WORDS.get(alert.metric, alert.metric), "link": alert_url(alert.pk),
    })


# The mail is stored without the link (it would be a usable credential at rest); the sender puts it in at send time.
INVITATION_LINK = "@@INVITATION_LINK@@"


def invitation(invitation, invited_by) -> Content:
    return render("invitation", f"You are invited to join {invitation.organization.name}", {
        "invitation": invitation,
        "org": invitation.organization,
        "invited_by": invited_by,
        "link": INVITATION_LINK,
        "valid_days": 7,
    })


# Like the invitation's, a reset link is a credential: the sender makes it at send time for the account it finds.
PASSWORD_RESET_LINK = "@@PASSWORD_RESET_LINK@@"


def password_reset(email: str) -> Content:
    """The reset mail for an address as typed (normalized): the same for an address with an account and one
    without, so the request does the same work for both; the worker decides whether it goes out."""
    return render("password_reset", "Reset your Voice Agent password", {"email": email, "link": PASSWORD_RESET_LINK})


def account_locked(email: str, failures: int) -> Content:
    return render("account_locked", "Failed log-ins to your Voice Agent account", {
        "email": email, "failures": failures, "reset_link": f"{settings.DASHBOARD_URL}/password-reset/",
    })
