"""The team's follow-up of callback requests, messages and escalations: handled or not, by whom and when. One
service for the dashboard's inbox (a user) and the API (`PATCH /v1/callbacks/{id}` and the like: an API key), so
each sees what the other did. No events (docs/webhooks.md#event-types)."""

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from audit import services as audit
from orgs.models import Organization
from orgs.tenancy import get_for_org

from ..models import CallbackRequest, Escalation, Message

FOLLOW_UPS = {"callback": CallbackRequest, "message": Message, "escalation": Escalation}


def follow_up_set_handled(*, kind: str, org: Organization, item_id, handled: bool, user=None, api_key=None,
                          now: datetime | None = None):
    """Marks one callback request, message or escalation of `org` handled (by `user` or `api_key`) or open again:
    (item, changed).

    Under the row's lock, so two people clicking at once record one handler (the first); marking it as it already
    is changes nothing. Another org's id is NotFound, the same as a missing one.
    """
    with transaction.atomic():
        item = get_for_org(FOLLOW_UPS[kind].objects.select_for_update(), org, item_id)
        if (item.handled_at is not None) == handled:
            return item, False
        item.handled_at = (now or timezone.now()) if handled else None
        item.handled_by = user if handled else None
        item.handled_by_key = api_key if handled else None
        item.save(update_fields=["handled_at", "handled_by", "handled_by_key", "updated_at"])
        audit.record(org=org, action=f"{kind}.handled", target=item, target_label=f"{kind} {item.pk}",
                     changes={"handled": [not handled, handled]})
        return item, True


def callback_mark_handled(*, org: Organization, callback_id, by, now: datetime | None = None):
    """The team called the caller back: (callback, changed)."""
    return follow_up_set_handled(kind="callback", org=org, item_id=callback_id, handled=True, user=by, now=now)


def message_mark_handled(*, org: Organization, message_id, by, now: datetime | None = None):
    """The message reached its team member: (message, changed)."""
    return follow_up_set_handled(kind="message", org=org, item_id=message_id, handled=True, user=by, now=now)


def escalation_mark_handled(*, org: Organization, escalation_id, by, now: datetime | None = None):
    """The escalation was followed up: (escalation, changed)."""
    return follow_up_set_handled(kind="escalation", org=org, item_id=escalation_id, handled=True, user=by, now=now)
