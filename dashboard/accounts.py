"""Invitations from the dashboard: the invitation row (orgs.invitations) and its e-mail (notifications outbox) in one
transaction, so an invitation is never without its e-mail nor an e-mail without its invitation. The link is put in
by the sender at send time; see orgs/invitations.py for why it is never stored."""

from django.db import transaction

from notifications.services import notify_invitation
from orgs.invitations import invitation_create, invitation_resend


@transaction.atomic
def invite(*, org, by, email: str, role: str, location_ids=None):
    invitation = invitation_create(org=org, by=by, email=email, role=role, location_ids=location_ids)
    notify_invitation(invitation=invitation, invited_by=by)
    return invitation


@transaction.atomic
def resend(*, invitation, by):
    invitation = invitation_resend(invitation=invitation, by=by)
    notify_invitation(invitation=invitation, invited_by=by)
    return invitation
