"""Builders for the alerts tests: rows placed at the time a test chooses (the evaluation takes `now`, so the clock is
the test's, with no sleeps)."""

import uuid
from datetime import datetime, timedelta

from calls.models import Call, CallbackRequest, Escalation
from webhooks.models import Delivery, DeliveryAttempt, Subscription
from webhooks.services import emit, subscription_create

T0 = datetime.fromisoformat("2026-11-25T15:00:00+00:00")  # a Wednesday
MINUTE = timedelta(minutes=1)


def call_at(org, when, *, location=None, status="completed", unanswered=0) -> Call:
    return Call.objects.create(organization=org, runtime_call_id=uuid.uuid4().hex, location=location, started_at=when,
                               status=status, unanswered_questions=["What time?"] * unanswered)


def callback_at(org, when, *, location=None) -> CallbackRequest:
    call = call_at(org, when, location=location)
    row = CallbackRequest.objects.create(organization=org, call=call, requested_window="asap", reason="Call me")
    CallbackRequest.objects.filter(pk=row.pk).update(created_at=when)
    return row


def escalation_at(org, when, *, location=None) -> Escalation:
    call = call_at(org, when, location=location)
    row = Escalation.objects.create(organization=org, call=call, rule_name="Manager", destination_type="phone",
                                    destination_phone="+14155550100", triggered_by="keyword")
    Escalation.objects.filter(pk=row.pk).update(created_at=when)
    return row


def attempt_at(org, when, *, ok: bool) -> DeliveryAttempt:
    subscription = org_subscription(org)
    event = emit(org=org, type="contact.created", data={"contact_id": str(uuid.uuid4())})
    delivery = Delivery.objects.filter(event=event, subscription=subscription).first() or Delivery.objects.create(
        organization=org, event=event, subscription=subscription)
    row = DeliveryAttempt.objects.create(organization=org, delivery=delivery, subscription_id=subscription.pk,
                                         number=1, status_code=200 if ok else 500)
    DeliveryAttempt.objects.filter(pk=row.pk).update(created_at=when)
    return row


def org_subscription(org):
    existing = Subscription.objects.filter(organization=org, url="https://hooks.example.com/crm").first()
    if existing:
        return existing
    subscription, _ = subscription_create(org=org, url="https://hooks.example.com/crm", events=["contact.created"])
    return subscription
