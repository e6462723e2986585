"""The rows the isolation matrices address (tests/api/test_matrix.py, tests/dashboard/test_location_matrix.py,
the audit trail's): one object of each kind, in an organization or all at one location, and a snapshot of every
row to show that a refused request changed nothing."""

from types import SimpleNamespace

from django.apps import apps
from django.utils import timezone

from alerts.models import Alert
from alerts.services import alert_rule_create
from audit.models import AuditEvent, AuditVerification
from calls.models import Booking, CallbackRequest, Escalation, Message
from knowledge.services import (
    calendar_create,
    call_field_create,
    escalation_rule_create,
    fact_create,
    location_create,
    team_member_create,
)
from privacy.models import Suppression
from privacy.services import erasure_request_create
from tests.support.runtime import Runtime
from webhooks.services import emit, subscription_create

HOURS = [{"day": "mon", "start": "00:00", "end": "24:00"}]
MISSING = SimpleNamespace(pk="00000000-0000-4000-8000-000000000000")


def _call_with_follow_ups(runtime, call_id, *, rule, calendar):
    """A callback, an escalation by `rule` and a booking on `calendar`, then the call's end (with a message) and
    its recording: the runtime's whole path; returns the Call row."""
    assert runtime.event(call_id, type="callback_requested", label="cb", data={
        "requested_window": "asap", "reason": "Matrix"}).status_code == 201
    assert runtime.event(call_id, type="escalation_triggered", label="esc", data={
        "rule_id": str(rule.id), "triggered_by": "keyword", "context": "x"}).status_code == 201
    assert runtime.event(call_id, type="appointment_booked", label="book", data={
        "calendar_id": str(calendar.id), "start_at": "2030-01-07T10:00:00Z",
        "end_at": "2030-01-07T10:30:00Z"}).status_code == 201
    assert runtime.complete(call_id, messages=[{"message": "Matrix message"}]).status_code in (200, 201)
    assert runtime.upload(call_id).status_code in (200, 201)
    return runtime.call(call_id)


def _rows_of(org, call, *, rule, calendar, subscription) -> dict:
    """The rows of the call, its subscription, and an erasure request (whose worker never runs)."""
    erasure = erasure_request_create(org=org, phone_number="+14155550999", suppress=True)
    return {
        "contact": call.contact,
        "call": call,
        "subscription": subscription,
        "delivery": subscription.deliveries.get(),
        "event": subscription.deliveries.get().event,
        "callback": CallbackRequest.objects.get(call=call),
        "message": Message.objects.get(call=call),
        "escalation": Escalation.objects.get(call=call),
        "escalation_rule": rule,
        "calendar": calendar,
        "booking": Booking.objects.get(calendar=calendar),
        "export": SimpleNamespace(pk="payments.csv"),  # no such kind
        "erasure_request": erasure,
        "suppression": Suppression.objects.get(erasure_request=erasure),
    }


def _alert_rows(org, location, call, *, name: str) -> dict:
    """An alert rule watching `location` and an open alert of it."""
    rule = alert_rule_create(org=org, name=name, metric="calls", comparator="gt", threshold=0, window_minutes=60,
                             location_ids=[location.pk], channels=[])
    return {"alert_rule": rule, "alert": Alert.objects.create(
        organization=org, rule=rule, location=location, metric="calls", value=3, threshold=0, window_minutes=60,
        triggered_at=call.started_at)}


def one_of_each(org) -> dict:
    """One of each object the API addresses, all in `org`. With CELERY_TASK_ALWAYS_EAGER off, the deliveries stay
    pending."""
    location = location_create(
        org=org, name="Main", address="1 Main St", timezone="America/New_York", phone_number="+12125550100"
    )
    runtime = Runtime(org)
    call_id, _ = runtime.start()
    member = team_member_create(org=org, name="Escalation target")
    rule = escalation_rule_create(org=org, name="Matrix", destination_type="team_member",
                                  destination_team_member=member, keywords=["manager"])
    calendar = calendar_create(org=org, name="Matrix", timezone_name="UTC", weekly_hours=HOURS)
    call = _call_with_follow_ups(runtime, call_id, rule=rule, calendar=calendar)
    subscription, _ = subscription_create(org=org, url="https://hooks.example.com/in", events=["call.ended"])
    emit(org=org, type="call.ended", data={"call_id": str(call.id)})
    return {
        **_rows_of(org, call, rule=rule, calendar=calendar, subscription=subscription),
        **_alert_rows(org, location, call, name="Matrix watch"),
        "location": location,
        "fact": fact_create(org=org, label="Hours", content="9-5"),
        "team_member": team_member_create(org=org, name="Sam"),
        "call_field": call_field_create(org=org, name="party_size", label="Party size", type="number"),
        "audit_event": AuditEvent.objects.for_org(org).order_by("occurred_at").first(),
        "audit_verification": AuditVerification.objects.create(
            organization_id=org.pk, status="succeeded", created_at=timezone.now(), updated_at=timezone.now()),
    }


def one_of_each_at(org, location) -> dict:
    """One of each object the API addresses, all at `location` (or attached to it only); the audit trail's are
    missing ids (a key limited to locations never reads the trail). Deliveries pending, as above."""
    runtime = Runtime(org)
    call_id, _ = runtime.start(location_id=location.id, from_number="+14155550177")
    member = team_member_create(org=org, name=f"{location.name} manager")
    rule = escalation_rule_create(org=org, name=f"{location.name} rule", destination_type="team_member",
                                  destination_team_member=member, keywords=["manager"], location=location)
    calendar = calendar_create(org=org, name=f"{location.name} calendar", timezone_name="UTC", location=location,
                               weekly_hours=HOURS)
    call = _call_with_follow_ups(runtime, call_id, rule=rule, calendar=calendar)
    subscription, _ = subscription_create(org=org, url="https://hooks.example.com/in", events=["call.ended"],
                                          location_ids=[location.id])
    emit(org=org, type="call.ended", data={"call_id": str(call.id)}, location_id=location.id)
    return {
        **_rows_of(org, call, rule=rule, calendar=calendar, subscription=subscription),
        **_alert_rows(org, location, call, name=f"{location.name} watch"),
        "location": location,
        "fact": fact_create(org=org, label=f"{location.name} hours", content="9-5", location=location),
        "team_member": member,
        "call_field": call_field_create(org=org, name="party_size", label="Party size", type="number",
                                        location_ids=[location.id]),
        "audit_event": MISSING,
        "audit_verification": MISSING,
    }


def snapshot() -> dict:
    """Row counts and the newest change of every project model: any write shows up here."""
    state = {}
    for model in apps.get_models():
        if model._meta.app_label not in {"orgs", "knowledge", "contacts", "calls", "webhooks", "meetings",
                                         "notifications", "audit", "privacy", "alerts"}:
            continue
        manager = model._default_manager
        state[model._meta.label] = manager.count()
        field = next((f for f in ("updated_at", "last_used_at") if hasattr(model, f)), None)
        if field:
            state[f"{model._meta.label}.{field}"] = manager.order_by(f"-{field}").values_list(field, flat=True).first()
    return state
