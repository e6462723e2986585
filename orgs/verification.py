"""Confirming that a user receives mail at their address, before their account can invite anyone.

A sign-up creates an unconfirmed account; the mail it sends carries a one-use code (Django's token generator, keyed
on the server's secret and the account's state, valid PASSWORD_RESET_TIMEOUT). The code travels in the link's
fragment, which browsers never send, so no server or proxy log records it: the page puts it in its form, and the
visitor confirms with a click on a button that names the address (dashboard/pages/auth.py). Any other mailed link
that was used (an invitation accepted, a password reset) confirms the address too; an operator's `create_org`
vouches for the accounts it creates. An account never confirmed cannot sign in or make API keys, and its first
confirmation hands it to the mailbox's owner (orgs.services.account_confirm).
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.db import transaction
from django.utils import timezone
from django.utils.encoding import force_bytes, force_str
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode

from core.errors import DomainError, Forbidden

from .models import EmailVerification

User = get_user_model()


class VerificationInvalid(DomainError):
    """A code that is unknown, expired, already used or for an address that changed: one answer for all."""

    status = 404
    code = "not_found"


class EmailNotVerified(Forbidden):
    """The acting account has not confirmed its address yet."""


class _Tokens(PasswordResetTokenGenerator):
    key_salt = "orgs.verification"

    def _make_hash_value(self, user, timestamp):
        # Spent once the address is confirmed, dead if the address changes, and dead once the password changes
        # (a code mailed before a password reset must not outlive it).
        return f"{user.pk}{user.email}{user.password}{timestamp}{is_verified(user)}"


_tokens = _Tokens()


def _address(user) -> str:
    return (user.email or user.username).lower()


def never_verified(user) -> bool:
    """No address of this account was ever confirmed: whoever set its password may not own the address (a sign-up
    with someone else's address), so its first confirmation makes the confirmer choose the password."""
    return not EmailVerification.objects.filter(user_id=user.pk).exists()


def is_verified(user) -> bool:
    row = EmailVerification.objects.filter(user_id=user.pk).values_list("email", flat=True).first()
    return row is not None and row == _address(user)


def require_verified(*, user, action: str) -> None:
    """EmailNotVerified unless `user` confirmed their address. `action` ends the message: "inviting members"."""
    if not is_verified(user):
        raise EmailNotVerified(
            f"Confirm your e-mail address before {action}: use the link we mailed to {_address(user)}, or send a new "
            "one from Settings → Members."
        )


def mark_verified(*, user) -> None:
    """Records that `user` receives mail at their current address (idempotent)."""
    EmailVerification.objects.update_or_create(
        user_id=user.pk, defaults={"email": _address(user), "verified_at": timezone.now()}
    )


def code_for(user) -> str:
    """The one-use code of the confirmation mail: the account's id and a token, `<uid>.<token>`."""
    return f"{urlsafe_base64_encode(force_bytes(user.pk))}.{_tokens.make_token(user)}"


def check(*, code: str, lock: bool = False):
    """The user `code` was made for, changing nothing (the page that names the address before the click); with
    `lock`, the user's row is locked (the caller's transaction confirms it). VerificationInvalid otherwise."""
    uid, _, token = (code or "").strip().partition(".")
    users = User.objects.select_for_update() if lock else User.objects
    try:
        user = users.filter(pk=force_str(urlsafe_base64_decode(uid))).first()
    except (ValueError, TypeError, OverflowError):
        user = None
    if user is None or not user.is_active or not _tokens.check_token(user, token):  # a disabled account stays out
        raise VerificationInvalid("This confirmation link is not valid: it expired or was already used. Sign up "
                                  "again with the same address to get a new one.")
    return user


@transaction.atomic
def verify(*, code: str):
    """Confirms the address of the account `code` was made for and returns that user; VerificationInvalid
    otherwise. A second use of a code finds the address confirmed and is refused like any spent code. (The
    dashboard confirms through orgs.services.account_confirm, which also settles a never-confirmed account.)"""
    user = check(code=code, lock=True)
    mark_verified(user=user)
    return user
