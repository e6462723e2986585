"""Every action the trail records (docs/api.md#audit-trail keeps the same list). `record` refuses any other name,
and `GET /v1/audit-events?action=` accepts exactly these, or a prefix of them ending in `.`."""

ACTIONS = {
    # Accounts (one entry per organization the account belongs to; an unknown address has no organization).
    "auth.signed_in": "A user signed in to the dashboard.",
    "auth.sign_in_failed": "A sign-in failed (the address tried is the actor's label; never the password).",
    "auth.signed_out": "A user signed out.",
    "auth.password_reset_requested": "A password reset e-mail was asked for.",
    "auth.password_reset_completed": "A password was set from a reset link.",
    # API keys
    "api_key.created": "An API key was created (its name, scopes and prefix; never the key).",
    "api_key.revoked": "An API key was revoked.",
    # Webhook subscriptions
    "webhook_subscription.created": "A webhook subscription was created.",
    "webhook_subscription.updated": "A webhook subscription's url, events, description or enabled flag changed.",
    "webhook_subscription.deleted": "A webhook subscription was deleted.",
    "webhook_subscription.secret_rotated": "A subscription's signing secret was rotated (the secret is redacted).",
    "webhook_subscription.replayed": "Past events were replayed to a subscription.",
    "webhook_subscription.recovered": "Failed deliveries since a time were requeued.",
    "webhook_subscription.tested": "A test event was sent to a subscription.",
    "webhook_subscription.auto_disabled": "The system disabled a subscription whose deliveries kept failing.",
    "webhook_subscription.reenabled": "A subscription disabled by the system was enabled again.",
    # Members, invitations, the organization
    "invitation.created": "Someone was invited into the organization.",
    "invitation.resent": "An invitation was sent again (a new link).",
    "invitation.accepted": "An invitation was accepted.",
    "invitation.revoked": "An invitation was revoked.",
    "membership.role_changed": "A member's role changed.",
    "membership.removed": "An admin removed a member.",
    "membership.left": "A member left the organization.",
    "organization.updated": "The organization's settings changed.",
    # Privacy
    "privacy.redaction_updated": "The redaction policy changed (the kinds redacted from calls' text at ingest, or "
                                 "whether recordings with sensitive data are kept).",
    # What the agent knows
    "fact.created": "A fact was created.",
    "fact.updated": "A fact changed.",
    "fact.deleted": "A fact was deleted.",
    "location.created": "A location was created.",
    "location.updated": "A location changed.",
    "location.deleted": "A location was deleted.",
    "team_member.created": "A team member was created.",
    "team_member.updated": "A team member changed.",
    "team_member.deleted": "A team member was deleted.",
    "escalation_rule.created": "An escalation rule was created.",
    "escalation_rule.updated": "An escalation rule changed.",
    "escalation_rule.deleted": "An escalation rule was deleted.",
    "calendar.created": "A calendar was created.",
    "calendar.updated": "A calendar changed.",
    "calendar.deleted": "A calendar was deleted.",
    "call_field.created": "A call field was created.",
    "call_field.updated": "A call field changed.",
    "call_field.deleted": "A call field was deleted (past calls keep their values).",
    # Alerts
    "alert_rule.created": "An alert rule was created.",
    "alert_rule.updated": "An alert rule changed.",
    "alert_rule.deleted": "An alert rule was deleted.",
    "alert.acknowledged": "An alert was acknowledged.",
    # Contacts
    "contact.filled": "A key or member limited to locations created a contact under a number the organization has "
                      "for a contact they cannot see: that contact took the fields it lacked (their names only).",
    # Calls' follow-ups
    "order.status_changed": "An order's status changed.",
    "booking.canceled": "A booking was canceled.",
    "callback.handled": "A callback request was marked handled (or not handled).",
    "message.handled": "A message was marked handled (or not handled).",
    "escalation.handled": "An escalation was marked handled (or not handled).",
    # Privacy (docs/privacy.md): ids, counts and digests only, never a caller's words, name or number
    "call.content_deleted": "A call's content (transcript and the texts quoting the caller, or the recording) was "
    "deleted, on request or by an erasure (the parts and the reason).",
    "retention.updated": "The retention policy changed (the organization's days or a location's).",
    "retention.purged": "A retention purge run deleted expired content (counts, a SHA-256 over the sorted call ids).",
    "privacy.erasure_requested": "A caller's erasure was asked for (the number's keyed digest, never the number).",
    "privacy.erasure_completed": "A caller's erasure completed (the counts of what it deleted).",
    "privacy.suppression_deleted": "A number was taken off the suppression list (its digest).",
}

PREFIXES = frozenset(action.split(".")[0] + "." for action in ACTIONS)


def is_known_filter(value: str) -> bool:
    """An exact action, or a prefix of some action ending in `.` (`webhook_subscription.`)."""
    return value in ACTIONS or value in PREFIXES
