"""The team's follow-up (the dashboard's inbox): marking a callback request, a message or an escalation handled,
recording who and when. No events: the spec has none for it."""

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from orgs.models import Organization
from orgs.tenancy import get_for_org

from ..models import CallbackRequest, Escalation, Message


def _mark_handled(model, *, org: Organization, item_id, by, now: datetime | None = None):
    """Marks one callback request, message or escalation of `org` handled by user `by`: (item, changed).

    Under the row's lock, so two people clicking at once record one handler (the first); already handled is a
    no-op. Another org's id is NotFound, the same as a missing one.
    """
    with transaction.atomic():
        item = get_for_org(model.objects.select_for_update(), org, item_id)
        if item.handled_at is not None:
            return item, False
        item.handled_at = now or timezone.now()
        item.handled_by = by
        item.save(update_fields=["handled_at", "handled_by", "updated_at"])
        return item, True


def callback_mark_handled(*, org: Organization, callback_id, by, now: datetime | None = None):
    """The team called the caller back: (callback, changed)."""
    return _mark_handled(CallbackRequest, org=org, item_id=callback_id, by=by, now=now)


def message_mark_handled(*, org: Organization, message_id, by, now: datetime | None = None):
    """The message reached its team member: (message, changed)."""
    return _mark_handled(Message, org=org, item_id=message_id, by=by, now=now)


def escalation_mark_handled(*, org: Organization, escalation_id, by, now: datetime | None = None):
    """The escalation was followed up: (escalation, changed)."""
    return _mark_handled(Escalation, org=org, item_id=escalation_id, by=by, now=now)
