"""Invitations: a person an admin adds who has no account yet gets an e-mail with a link to set their password.

The link is Django's own password-reset link (`default_token_generator`, `PasswordResetConfirmView` at
`dashboard:password-reset-confirm`): single use (the token is bound to the password hash and last login, so
setting a password or logging in spends it), valid for `PASSWORD_RESET_TIMEOUT`. After that, "Forgot your
password?" on the log-in page sends a fresh one: invited users hold a random unguessable password, not an
unusable one, precisely so that Django's reset form does not skip them.
"""

import logging
import smtplib

from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

logger = logging.getLogger(__name__)


def set_password_url(user) -> str:
    """An absolute one-time link to set `user`'s password. Built on DASHBOARD_URL, never on the request's Host
    header, so a forged Host cannot point the link elsewhere."""
    uidb64 = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    path = reverse("dashboard:password-reset-confirm", kwargs={"uidb64": uidb64, "token": token})
    return f"{settings.DASHBOARD_URL}{path}"


def send_invitation(*, user, org, invited_by) -> bool:
    """E-mails `user` that `invited_by` added them to `org`, with a set-password link. True if it was sent.

    Called after the membership is committed; a failed send does not undo it (the person can still use
    "Forgot your password?"), it is logged and reported to the admin.
    """
    context = {
        "user": user,
        "org": org,
        "invited_by": invited_by,
        "link": set_password_url(user),
        "login_url": f"{settings.DASHBOARD_URL}{reverse('dashboard:login')}",
        "valid_days": max(1, settings.PASSWORD_RESET_TIMEOUT // 86400),
    }
    # A subject is one line, whatever the organization's name holds.
    subject = " ".join(render_to_string("dashboard/auth/invitation_subject.txt", context).split())
    body = render_to_string("dashboard/auth/invitation_email.txt", context)
    try:
        send_mail(subject, body, None, [user.email])
    except (smtplib.SMTPException, OSError):
        logger.exception("Could not send the invitation e-mail to user %s", user.pk)
        return False
    return True
