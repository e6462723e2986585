"""Helpers for the account flows: e-mailed set-password, confirmation and invitation links, the sends that carry
them, and the session store."""

import json
import re
from urllib.parse import urlsplit

from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.core import mail

from notifications.models import EmailNotification
from notifications.sender import send_notification

NEW_PASSWORD = "a-brand-new-passphrase-42"


def confirmation_code(message) -> str:
    """The code of the one confirmation link in an e-mail: the link's fragment (`/verify-email/#<code>`)."""
    links = [link for link in re.findall(r"https?://\S+", message.body) if "/verify-email/" in link]
    assert len(links) == 1, message.body
    parts = urlsplit(links[0])
    assert parts.path == "/verify-email/" and not parts.query and parts.fragment, links[0]
    return parts.fragment


def reset_link_path(message) -> str:
    """The path of the one set-password link in an e-mail (its host is DASHBOARD_URL)."""
    links = re.findall(r"https?://\S+", message.body)
    paths = [urlsplit(link).path for link in links if "/password-reset/" in link]
    assert len(paths) == 1, message.body
    return paths[0]


def set_password_through(client, path: str, password: str = NEW_PASSWORD):
    """Follows an e-mailed link the way a browser does (Django moves the token into the session) and sets
    the password; returns the final response."""
    opened = client.get(path)
    assert opened.status_code == 302 and opened["Location"].endswith("/set-password/")
    form = client.get(opened["Location"])
    assert form.status_code == 200 and 'name="new_password1"' in form.content.decode()
    return client.post(opened["Location"], {"new_password1": password, "new_password2": password}, follow=True)


def session_rows() -> list[str]:
    """Every row of `django_session` as stored and as decoded, one string each: what a database reader sees."""
    return [
        row.session_data + json.dumps(SessionStore().decode(row.session_data), default=str)
        for row in Session.objects.all()
    ]


def confirm_through(client, code: str, password: str | None = NEW_PASSWORD, follow: bool = True):
    """The confirmation page's two clicks: the code (the page then names the address), then the button that names
    it, with the password an account never confirmed before must choose (None: no password fields)."""
    named = client.post("/verify-email/", {"code": code})
    assert named.status_code == 200 and 'data-testid="confirm-account"' in named.content.decode(), named.content
    data = {"code": code, "confirm": "1"}
    if password is not None:
        data.update(new_password1=password, new_password2=password)
    return client.post("/verify-email/", data, follow=follow)


def send_account_mail() -> list[str]:
    """Runs the e-mail worker's send for every pending account mail (password resets, lockout notices), as a
    worker would after the request's commit; returns the results."""
    rows = EmailNotification.objects.filter(organization__isnull=True, status="pending").order_by("created_at")
    return [send_notification(pk) for pk in rows.values_list("pk", flat=True)]


def deliver() -> list:
    """Sends every pending outbox e-mail as the worker would; returns the messages sent."""
    before = len(mail.outbox)
    for row in EmailNotification.objects.filter(status="pending"):
        send_notification(row.pk)
    return mail.outbox[before:]


def link_of(message) -> str:
    """The path of the one invitation link in an e-mail."""
    return re.search(r"https?://[^/\s]+(/invitations/[0-9a-f-]{36}/[0-9a-f]{64}/)", message.body).group(1)
