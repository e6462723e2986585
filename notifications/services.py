"""Writes of the notifications app: the recipient list (admins only), and the e-mails that follow from a
callback request, a message, an escalation or a webhook problem. Keyword-only; one transaction each.

Who is mailed:
- callback requests, messages, escalations: every recipient who chose that kind, plus the team member the
  thing is addressed to (the callback's requested member, the message's member, the escalation's destination
  member), whether or not that member is a listed recipient. A message for Maria therefore reaches Maria, and
  also whoever chose "messages" (e.g. the front desk that covers for her); listing "messages" means every
  message, not only the unaddressed ones. One address gets one e-mail per thing, however it qualifies.
- webhook problems: every org admin, always, plus the recipients who chose that kind.

The `notify_*` functions are called explicitly by the service that records the thing, inside its transaction
(no signals): they write one `EmailNotification` row per address and send after commit, so a rolled-back
change mails nothing and a committed one is never lost (the beat sweep covers a broker that was down).
"""

import secrets

from django.contrib.auth.models import BaseUserManager
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import Conflict, NotFound, ValidationFailed
from knowledge.models import TeamMember
from orgs.models import Organization
from orgs.scopes import clean_location_ids
from orgs.services import require_admin
from orgs.tenancy import get_for_org

from . import content
from .models import KIND_FIELDS, EmailNotification, Kind, NotificationRecipient
from .selectors import org_admin_addresses, recipient_addresses
from .sender import send_inline
from .tasks import publisher

MAX_EMAIL = 254

# --- the recipient list ------------------------------------------------------------------------------------


def _resolve_member(org: Organization, team_member) -> TeamMember:
    """A team member of `org` (an instance or an id), or a field error: another org's member is not offered."""
    try:
        member = get_for_org(TeamMember, org, getattr(team_member, "pk", team_member))
    except NotFound:
        raise ValidationFailed(field_errors={"team_member": ["Choose a team member of your organization."]}) from None
    if not member.email:
        raise ValidationFailed(field_errors={
            "team_member": [f"{member.name} has no e-mail address. Add one on the Team page first."]
        })
    return member


def _clean_email(email: str) -> str:
    email = BaseUserManager.normalize_email(email.strip())  # lower-cases the domain only
    errors = []
    if len(email) > MAX_EMAIL:
        errors.append(f"Ensure this field has no more than {MAX_EMAIL} characters.")
    else:
        try:
            validate_email(email)
        except DjangoValidationError:
            errors.append("Enter a valid email address.")
    if errors:
        raise ValidationFailed(field_errors={"email": errors})
    return email


def _apply(org: Organization, recipient: NotificationRecipient, values: dict) -> None:
    """Validates and sets the target (a team member xor an address) and the kinds on `recipient`."""
    team_member, email = values.get("team_member"), (values.get("email") or "").strip()
    if team_member and email:
        raise ValidationFailed(form_errors=["Choose a team member or type an e-mail address, not both."])
    if not team_member and not email:
        raise ValidationFailed(form_errors=["Choose a team member or type an e-mail address."])
    if team_member:
        recipient.team_member, recipient.email = _resolve_member(org, team_member), None
    else:
        recipient.team_member, recipient.email = None, _clean_email(email)
    for kind in KIND_FIELDS:
        setattr(recipient, kind, bool(values.get(kind)))
    if not recipient.kinds:
        raise ValidationFailed(form_errors=["Choose at least one kind of notification."])
    location_ids = values.get("location_ids")
    recipient.location_ids = None if not location_ids else clean_location_ids(org=org, location_ids=list(location_ids))


def _save(recipient: NotificationRecipient) -> NotificationRecipient:
    try:
        with transaction.atomic():
            recipient.save()
    except IntegrityError:
        # The unique constraints decide (no check-then-insert): one row per team member and per address.
        if recipient.team_member_id:
            raise Conflict("team_member", "This team member is already a recipient.") from None
        raise Conflict("email", "This e-mail address is already a recipient.") from None
    return recipient


@transaction.atomic
def recipient_create(
    *, org: Organization, by, team_member=None, email: str | None = None, callback_requests: bool = False,
    messages: bool = False, escalations: bool = False, webhook_problems: bool = False, alerts: bool = False,
    location_ids: list | None = None,
) -> NotificationRecipient:
    """Adds a recipient: a team member of the org (instance or id) or a plain e-mail address, with at least one
    kind, hearing about the whole organization or, with `location_ids`, those locations only. Admins only
    (NotAnAdmin otherwise). ValidationFailed on bad input, Conflict when already listed."""
    require_admin(user=by, org=org)
    recipient = NotificationRecipient(organization=org)
    _apply(org, recipient, {
        "team_member": team_member, "email": email, "callback_requests": callback_requests, "messages": messages,
        "escalations": escalations, "webhook_problems": webhook_problems, "alerts": alerts,
        "location_ids": location_ids,
    })
    return _save(recipient)


@transaction.atomic
def recipient_update(*, recipient: NotificationRecipient, by, **changes) -> NotificationRecipient:
    """Changes any of team_member, email and the kinds (same rules as create; giving one target clears the
    other). Admins only. The caller has scoped `recipient` to the org."""
    org = recipient.organization
    require_admin(user=by, org=org)
    unknown = set(changes) - {"team_member", "email", "location_ids", *KIND_FIELDS}
    if unknown:
        raise ValidationFailed(form_errors=[f"Unrecognized key(s): {', '.join(sorted(unknown))}"])
    locked = NotificationRecipient.objects.select_for_update().get(pk=recipient.pk)
    values = {"team_member": locked.team_member_id, "email": locked.email, "location_ids": locked.location_ids,
              **{kind: getattr(locked, kind) for kind in KIND_FIELDS}}
    if "location_ids" in changes:
        values["location_ids"] = changes["location_ids"]
    if "team_member" in changes or "email" in changes:
        values["team_member"], values["email"] = changes.get("team_member"), changes.get("email")
    values.update({kind: changes[kind] for kind in KIND_FIELDS if kind in changes})
    _apply(org, locked, values)
    return _save(locked)


@transaction.atomic
def recipient_delete(*, recipient: NotificationRecipient, by) -> None:
    """Removes a recipient. Admins only. E-mails already queued for it are still sent."""
    require_admin(user=by, org=recipient.organization)
    NotificationRecipient.objects.filter(pk=recipient.pk, organization=recipient.organization).delete()


# --- the e-mails that follow from a change -----------------------------------------------------------------


def _unique(addresses) -> list[str]:
    """Addresses without blanks and without repeats (case-insensitive), first spelling kept, order kept."""
    seen, unique = set(), []
    for address in addresses:
        if address and address.lower() not in seen:
            seen.add(address.lower())
            unique.append(address)
    return unique


def _queue(*, org_id, kind: str, source: str, addresses, mail: content.Content, call=None,
           inline: bool = False) -> list[EmailNotification]:
    """Writes one pending row per address in the caller's transaction and sends them after commit: through the
    `notifications.send` task, or in this process when `inline` (for code already running in a worker)."""
    addresses = _unique(addresses)
    if not addresses:
        return []
    now = timezone.now()
    rows = [
        EmailNotification(
            organization_id=org_id, kind=kind, source=source, call_id=call.pk if call else None, to_email=address,
            subject=mail.subject, body_text=mail.text, body_html=mail.html, next_attempt_at=now, enqueued_at=now,
        )
        for address in addresses
    ]
    with transaction.atomic():
        # A row that already exists (same thing, same address) is left alone: its own send is under way.
        EmailNotification.objects.bulk_create(rows, ignore_conflicts=True)
        if inline:
            ids = [str(row.pk) for row in rows]
            transaction.on_commit(lambda: send_inline(ids))
        else:
            publisher.publish_on_commit([row.pk for row in rows])
    return rows


def _member_address(member_id) -> str | None:
    if not member_id:
        return None
    return TeamMember.objects.filter(pk=member_id).values_list("email", flat=True).first()


def notify_callback_requested(*, callback, call) -> list[EmailNotification]:
    """E-mails a new callback request to the "callback requests" recipients and the requested team member.
    Called by calls.services.tool_events.callback_request_create in its transaction (the call's lock held)."""
    addresses = [_member_address(callback.requested_team_member_id),
                 *recipient_addresses(org_id=call.organization_id, kind=Kind.CALLBACK_REQUESTS,
                                     location_id=call.location_id)]
    return _queue(org_id=call.organization_id, kind=Kind.CALLBACK_REQUESTS, source=f"callback_request:{callback.pk}",
                  addresses=addresses, mail=content.callback_requested(callback, call), call=call)


def notify_message_taken(*, message, call) -> list[EmailNotification]:
    """E-mails a message to the team member it is for and to the "messages" recipients. Called by
    calls.services.lifecycle.call_complete exactly where it emits `call.message_taken`, so an unscorable call's messages
    (robocalls, dialers, wrong numbers), which are never announced (docs/webhooks.md#event-types), mail nobody
    either."""
    addresses = [_member_address(message.for_team_member_id),
                 *recipient_addresses(org_id=call.organization_id, kind=Kind.MESSAGES,
                                     location_id=call.location_id)]
    return _queue(org_id=call.organization_id, kind=Kind.MESSAGES, source=f"message:{message.pk}",
                  addresses=addresses, mail=content.message_taken(message, call), call=call)


def notify_escalation_triggered(*, escalation, call) -> list[EmailNotification]:
    """E-mails an escalation to the "escalations" recipients and the team member it was routed to."""
    addresses = [_member_address(escalation.destination_team_member_id),
                 *recipient_addresses(org_id=call.organization_id, kind=Kind.ESCALATIONS,
                                     location_id=call.location_id)]
    return _queue(org_id=call.organization_id, kind=Kind.ESCALATIONS, source=f"escalation:{escalation.pk}",
                  addresses=addresses, mail=content.escalation_triggered(escalation, call), call=call)


def _webhook_addresses(org_id) -> list[str]:
    return [*org_admin_addresses(org_id=org_id), *recipient_addresses(org_id=org_id, kind=Kind.WEBHOOK_PROBLEMS)]


def notify_webhook_disabled(*, subscription, reason: str) -> list[EmailNotification]:
    """Tells the org's admins (and "webhook problems" recipients) that a subscription was disabled.

    Called by the webhook sender inside a Celery worker, so the rows are sent inline after commit (a second
    broker hop would add only latency); a failed send is retried by the sweep like any other.
    """
    stamp = int((subscription.disabled_at or timezone.now()).timestamp() * 1000)
    return _queue(org_id=subscription.organization_id, kind=Kind.WEBHOOK_PROBLEMS,
                  source=f"webhook_disabled:{subscription.pk}:{stamp}", addresses=_webhook_addresses(
                      subscription.organization_id), mail=content.webhook_disabled(subscription, reason), inline=True)


def notify_webhook_exhausted(*, delivery, subscription) -> list[EmailNotification]:
    """Tells the org's admins (and "webhook problems" recipients) that an event used up its attempts."""
    stamp = int(timezone.now().timestamp() * 1000)
    return _queue(org_id=delivery.organization_id, kind=Kind.WEBHOOK_PROBLEMS,
                  source=f"webhook_exhausted:{delivery.pk}:{stamp}",
                  addresses=_webhook_addresses(delivery.organization_id),
                  mail=content.webhook_exhausted(delivery, subscription), inline=True)


def notify_alert(*, alert, rule_name: str, location_name: str | None, resolved: bool) -> list[EmailNotification]:
    """E-mails an alert's opening (or its resolution) to the "alerts" recipients who hear about its location (an
    organization-wide alert: the organization-wide recipients only). Called by the alerts evaluation in its
    transaction, inside a worker: sent inline after commit."""
    state = "resolved" if resolved else "triggered"
    return _queue(org_id=alert.organization_id, kind=Kind.ALERTS, source=f"alert_{state}:{alert.pk}",
                  addresses=recipient_addresses(org_id=alert.organization_id, kind=Kind.ALERTS,
                                                location_id=alert.location_id),
                  mail=content.alert(alert, rule_name=rule_name, location_name=location_name, resolved=resolved),
                  inline=True)


def notify_webhook_failing(*, subscription, consecutive_failures: int, now) -> list[EmailNotification]:
    """Tells the org's admins (and "webhook problems" recipients) that an endpoint has failed several times in a
    row (the `webhook_subscription.failing` event's e-mail), once per failure streak."""
    stamp = int(now.timestamp() * 1000)
    return _queue(org_id=subscription.organization_id, kind=Kind.WEBHOOK_PROBLEMS,
                  source=f"webhook_failing:{subscription.pk}:{stamp}",
                  addresses=_webhook_addresses(subscription.organization_id),
                  mail=content.webhook_failing(subscription, consecutive_failures), inline=True)


def notify_webhook_recovered(*, subscription, now) -> list[EmailNotification]:
    """Tells the same people that an endpoint announced as failing answered 2xx again."""
    stamp = int(now.timestamp() * 1000)
    return _queue(org_id=subscription.organization_id, kind=Kind.WEBHOOK_PROBLEMS,
                  source=f"webhook_recovered:{subscription.pk}:{stamp}",
                  addresses=_webhook_addresses(subscription.organization_id),
                  mail=content.webhook_recovered(subscription), inline=True)


def notify_invitation(*, invitation, invited_by) -> list[EmailNotification]:
    """E-mails the invited address its link, through the outbox, in the caller's transaction. `source` names the
    invitation and its nonce: a resend (new nonce) is a new e-mail, and the sender derives that nonce's link."""
    return _queue(org_id=invitation.organization_id, kind=Kind.INVITATIONS,
                  source=f"invitation:{invitation.pk}:{invitation.nonce}", addresses=[invitation.email],
                  mail=content.invitation(invitation, invited_by))


# --- an account's own mail (no organization) -------------------------------------------------------------------


def notify_password_reset(*, email: str) -> list[EmailNotification]:
    """Queues the reset mail for `email` (normalized by the caller), whether or not an account has it: the request
    writes one row and publishes one task either way, so its time tells nothing; the worker resolves the account
    at send time and drops the row when there is none (notifications.sender). Each request is its own mail (a
    random `source`); the callers' brakes bound how many."""
    return _queue(org_id=None, kind=Kind.PASSWORD_RESET, source=f"password_reset:{secrets.token_hex(8)}",
                  addresses=[email], mail=content.password_reset(email))


def notify_account_locked(*, user, failures: int, window: int) -> list[EmailNotification]:
    """Tells an account's owner that its log-ins are braked after `failures` wrong passwords. `window` names the
    brake's window (the caller sends one per window), and the unique (source, address) keeps it to one row."""
    email = user.email or user.username
    return _queue(org_id=None, kind=Kind.ACCOUNT_LOCKED, source=f"account_locked:{user.pk}:{window}",
                  addresses=[email], mail=content.account_locked(email, failures))
