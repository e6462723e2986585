"""The mails of sign-up: the confirmation link of a new account, and the note to an address that has an account
already (a second sign-up with it). Both are sent from the sign-up answer, which is the same page either way, so the
page never tells who has an account; only the mailbox's owner learns it."""

from django.conf import settings
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse

from orgs.verification import code_for, is_verified


def _link(code: str) -> str:
    """The confirmation link. The code is in the fragment, which no request carries (so no log records it): the page
    puts it in its form (dashboard.js), which the visitor submits."""
    return f"{settings.DASHBOARD_URL}{reverse('dashboard:verify-email')}#{code}"


def _send(template: str, subject: str, address: str, **context) -> None:
    body = render_to_string(f"dashboard/auth/{template}.txt", {"dashboard_url": settings.DASHBOARD_URL, **context})
    send_mail(subject, body, None, [address])


def send_confirmation(user) -> None:
    """Says nothing the signer-up chose (not the organization's name): anyone may sign up with any address, so
    whatever this mail carries goes to a stranger's mailbox from our domain."""
    code = code_for(user)
    _send("verify_email_email", "Confirm your Voice Agent e-mail address", user.email, link=_link(code), code=code)


def send_account_exists(user) -> None:
    """To the owner of an address someone signed up with again: how to get in, and a fresh confirmation link if
    the address was never confirmed (a lost first mail)."""
    code = None if is_verified(user) else code_for(user)
    _send("signup_exists_email", "You already have a Voice Agent account", user.email, email=user.email, code=code,
          link=_link(code) if code else None)
