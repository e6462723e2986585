"""Absolute links into the dashboard that leave the service (event payloads, e-mails). Built on DASHBOARD_URL,
never on a request's Host header, and in one place: the dashboard's URLs (dashboard/urls.py) answer exactly these."""

from django.conf import settings


def call_url(call_id) -> str:
    """A call's page: the `call_url` of `call.ended`, and the link in e-mails about a call."""
    return f"{settings.DASHBOARD_URL}/calls/{call_id}"


def meeting_url(meeting_id) -> str:
    """A meeting's page: the `meeting_url` of `meeting.outcome_approved`."""
    return f"{settings.DASHBOARD_URL}/meetings/{meeting_id}"


def webhook_subscription_url(subscription_id) -> str:
    """A subscription's page in Settings → Webhooks, linked from the e-mails about a failing endpoint."""
    return f"{settings.DASHBOARD_URL}/settings/webhooks/{subscription_id}/"


def invitation_url(invitation_id, token: str) -> str:
    """An invitation's accept page (the link in the invitation e-mail)."""
    return f"{settings.DASHBOARD_URL}/invitations/{invitation_id}/{token}/"


def alert_url(alert_id) -> str:
    """An alert's place on the Alerts page: the `alert_url` of the alert events and the link in alert e-mails."""
    return f"{settings.DASHBOARD_URL}/alerts/{alert_id}/"


def password_reset_url(uidb64: str, token: str) -> str:
    """A password reset link (the reset mail's, made by the e-mail sender at send time)."""
    return f"{settings.DASHBOARD_URL}/password-reset/{uidb64}/{token}/"
