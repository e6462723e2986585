"""Invitations into an organization: created, resent and revoked by its admins, accepted by the invitee.

Nothing but the invitation row exists before acceptance: no user, no membership. The link carries a token that is
an HMAC of (invitation id, nonce) under the server's secret; the row keeps only the token's SHA-256, and the e-mail
outbox keeps the mail without the link (notifications.sender puts it in at send time), so no stored text holds a
usable link. Each resend draws a new nonce (the previous link dies) and restarts the 7 days.
"""

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from audit import services as audit
from core import counters
from core.errors import Conflict, ValidationFailed
from core.validation import check_email

from .errors import InvitationInvalid, TooManyInvitations, WrongAccount
from .models import Invitation, Membership, Organization
from .scopes import audited_location_ids, clean_member_scope
from .services import account_create, require_admin
from .verification import mark_verified, require_verified

User = get_user_model()

VALID_FOR = timedelta(days=7)
INVITATIONS_PER_HOUR = 20


def token_for(invitation_id, nonce: str) -> str:
    return salted_hmac("orgs.invitation", f"{invitation_id}:{nonce}", algorithm="sha256").hexdigest()


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _count_one(org: Organization) -> None:
    """One more invitation e-mail for `org` this hour, or TooManyInvitations (shared by every process)."""
    if counters.hit_window(f"invitations:{org.pk}", seconds=3600)[0] > INVITATIONS_PER_HOUR:
        raise TooManyInvitations(f"At most {INVITATIONS_PER_HOUR} invitations an hour: try again later.")


def _arm(invitation: Invitation) -> None:
    now = timezone.now()
    invitation.nonce = secrets.token_hex(16)
    invitation.token_digest = _digest(token_for(invitation.pk, invitation.nonce))
    invitation.sent_at = now
    invitation.expires_at = now + VALID_FOR


ROLE_ERROR = "Role must be admin, member or location_manager."


def _clean(email, role) -> str:
    email = (email or "").strip().lower()
    errors = {}
    if not email:
        errors["email"] = ["This field is required."]
    else:
        try:
            check_email(email)
        except ValidationFailed as exc:
            errors.update(exc.details["fieldErrors"])
    if role not in Membership.Role.values:
        errors["role"] = [ROLE_ERROR]
    if errors:
        raise ValidationFailed(field_errors=errors)
    return email


@transaction.atomic
def invitation_create(*, org: Organization, by, email: str, role: str, location_ids=None) -> Invitation:
    """Invites `email` into `org` with `role` (admins only); a location manager with the `location_ids` it will be
    limited to (orgs.scopes.clean_member_scope). The same answer whether or not the address has an
    account anywhere; an open invitation of the same address is resent (new link, new 7 days, the new role).
    Conflict when that person already belongs to the org (admins see the member list anyway). The inviter must
    have confirmed their own address (EmailNotVerified): no invitation goes out in the name of an unconfirmed one."""
    require_admin(user=by, org=org)
    require_verified(user=by, action="inviting members")
    email = _clean(email, role)
    location_ids = clean_member_scope(org=org, role=role, location_ids=location_ids)
    if Membership.objects.filter(organization=org, user__username=email).exists():
        raise Conflict("email", "This person is already a member.")
    _count_one(org)
    invitation = Invitation.objects.select_for_update().filter(
        organization=org, email=email, accepted_at__isnull=True, revoked_at__isnull=True
    ).first() or Invitation(organization=org, email=email)
    resent = invitation.pk is not None and not invitation._state.adding
    before = {"role": invitation.role, "location_ids": audited_location_ids(invitation.location_ids)}
    invitation.role, invitation.location_ids, invitation.invited_by = role, location_ids, by
    _arm(invitation)
    try:
        with transaction.atomic():
            invitation.save()
    except IntegrityError:  # the same address invited at this very moment by another admin
        raise Conflict("email", "This address was just invited.") from None
    after = {"role": role, "location_ids": audited_location_ids(location_ids)}
    if resent:
        audit.record(org=org, action="invitation.resent", target=invitation, target_label=invitation.email,
                     changes={name: [before[name], after[name]] for name in after if before[name] != after[name]})
    else:
        created = {"email": email, "role": role}
        if location_ids is not None:
            created["location_ids"] = after["location_ids"]
        audit.record(org=org, action="invitation.created", target=invitation, target_label=invitation.email,
                     changes=audit.created(created))
    return invitation



@transaction.atomic
def invitation_resend(*, invitation: Invitation, by) -> Invitation:
    """A new link for an open invitation (the previous one stops working) and 7 more days."""
    require_admin(user=by, org=invitation.organization)
    require_verified(user=by, action="inviting members")
    locked = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if not locked.is_open:
        raise Conflict("invitation", "This invitation was already accepted or revoked.")
    _count_one(locked.organization)
    _arm(locked)
    locked.save(update_fields=["nonce", "token_digest", "sent_at", "expires_at", "updated_at"])
    audit.record(org=locked.organization, action="invitation.resent", target=locked, target_label=locked.email)
    return locked


@transaction.atomic
def invitation_revoke(*, invitation: Invitation, by) -> Invitation:
    require_admin(user=by, org=invitation.organization)
    locked = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if locked.is_open:
        locked.revoked_at = timezone.now()
        locked.save(update_fields=["revoked_at", "updated_at"])
        audit.record(org=locked.organization, action="invitation.revoked", target=locked, target_label=locked.email,
                     changes={"revoked_at": [None, locked.revoked_at]})
    return locked


def _valid(invitation_id, token: str, *, lock: bool = False) -> Invitation:
    """The open, unexpired invitation this link names, or InvitationInvalid (one answer for every reason)."""
    rows = Invitation.objects.select_related("organization")
    if lock:
        rows = rows.select_for_update(of=("self",))
    try:
        invitation = rows.filter(pk=invitation_id).first()
    except (ValueError, TypeError):
        invitation = None
    if (
        invitation is None
        or not isinstance(token, str)
        or not hmac.compare_digest(invitation.token_digest, _digest(token))
        or not invitation.is_open
        or invitation.expires_at <= timezone.now()
    ):
        raise InvitationInvalid("This invitation link is not valid: it expired, was used or revoked, or a newer "
                                "one was sent. Ask an admin of the organization to invite you again.")
    return invitation


def invitation_for_link(*, invitation_id, token: str) -> Invitation:
    return _valid(invitation_id, token)


def account_exists(email: str) -> bool:
    return User.objects.filter(username=email).exists()


@transaction.atomic
def invitation_accept(*, invitation_id, token: str, user) -> Membership:
    """The signed-in `user` (whose e-mail must be the invited address) joins with the invited role; the link is
    spent; a location manager's membership is limited to the invitation's locations. Joining an org one already
    belongs to keeps the existing role and scope."""
    invitation = _valid(invitation_id, token, lock=True)
    if (user.email or user.username).lower() != invitation.email:
        raise WrongAccount(f"This invitation is for {invitation.email}. Log in as that address to accept it.")
    membership, _ = Membership.objects.get_or_create(
        user=user, organization=invitation.organization,
        defaults={"role": invitation.role, "location_ids": invitation.location_ids},
    )
    invitation.accepted_at, invitation.accepted_by = timezone.now(), user
    invitation.save(update_fields=["accepted_at", "accepted_by", "updated_at"])
    mark_verified(user=user)  # the link reached the invited address, which is this account's
    changes = {"role": [None, membership.role]}
    if membership.location_ids is not None:
        changes["location_ids"] = [None, audited_location_ids(membership.location_ids)]
    audit.record(org=invitation.organization, action="invitation.accepted", target=invitation,
                 target_label=invitation.email, actor=audit.user_actor(user), changes=changes)
    return membership


@transaction.atomic
def invitation_accept_new_account(*, invitation_id, token: str, password: str):
    """The invitee has no account: one is created for the invited address with `password`, and joins. Returns the
    membership. Conflict when an account with that address exists (log in instead): a link never sets a password."""
    invitation = _valid(invitation_id, token, lock=True)
    user = account_create(email=invitation.email, password=password)
    return invitation_accept(invitation_id=invitation_id, token=token, user=user)


def open_invitations(*, org: Organization):
    """The org's pending invitations (expired ones included, marked by `expires_at`), newest first."""
    return Invitation.objects.for_org(org).filter(accepted_at__isnull=True, revoked_at__isnull=True).order_by(
        "-sent_at"
    )
