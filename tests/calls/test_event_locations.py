"""Every event records where it happened: the location of the call that caused it, a booking's own location for
`call.appointment_booked`, and none when nothing located caused it (issue 28, event delivery)."""

from knowledge.services import calendar_create, escalation_rule_create
from orgs.models import Location
from tests.support.events import events
from tests.support.runtime import T0
from webhooks.models import Event


def _location(org, name):
    return Location.objects.create(organization=org, name=name, timezone="UTC")


def test_each_event_of_a_located_call_records_the_calls_location(api, org, runtime):
    l1, l2 = _location(org, "Mission"), _location(org, "Castro")
    rule = escalation_rule_create(org=org, name="Manager", destination_type="phone",
                                  destination_phone="+14155550100", keywords=["manager"])
    call_id, _ = runtime.start(location_id=l1.pk)
    assert runtime.event(call_id, type="callback_requested", label="Callback",
                         data={"requested_window": "asap", "reason": "Billing"}).status_code == 201
    assert runtime.event(call_id, type="escalation_triggered", label="Manager",
                         data={"rule_id": str(rule.pk), "triggered_by": "keyword", "context": "x"}).status_code == 201
    assert runtime.complete(call_id, messages=[{"message": "Call me back"}]).status_code in (200, 201)
    assert runtime.upload(call_id).status_code in (200, 201)
    call = runtime.call(call_id)
    assert api.patch(f"/v1/calls/{call.pk}/order-status", {"status": "in_progress"}, format="json").status_code == 200

    located = {e.type: e.location_id for e in events(org)}
    assert located == dict.fromkeys([
        "call.callback_requested", "call.escalation_triggered", "contact.created", "call.ended",
        "call.message_taken", "call.recording_ready", "call_order.status_changed"], l1.pk)
    assert not Event.objects.filter(location_id=l2.pk).exists()


def test_a_booking_is_where_its_calendar_is_else_where_the_call_is(org, runtime):
    l1, l2 = _location(org, "Mission"), _location(org, "Castro")
    hours = [{"day": day, "start": "00:00", "end": "23:59"} for day in ("mon", "tue", "wed", "thu", "fri", "sat",
                                                                         "sun")]
    at_l2 = calendar_create(org=org, name="Castro tables", timezone_name="UTC", weekly_hours=hours, location=l2)
    anywhere = calendar_create(org=org, name="Any tables", timezone_name="UTC", weekly_hours=hours)
    call_id, _ = runtime.start(location_id=l1.pk)
    for calendar, hour in ((at_l2, 10), (anywhere, 12)):
        start = T0.replace(hour=hour)
        assert runtime.event(call_id, type="appointment_booked", label="Booked", data={
            "calendar_id": str(calendar.pk), "start_at": start.isoformat().replace("+00:00", "Z"),
            "end_at": start.replace(minute=30).isoformat().replace("+00:00", "Z")}).status_code == 201
    assert [e.location_id for e in events(org, "call.appointment_booked")] == [l2.pk, l1.pk]


def test_events_of_a_call_without_a_location_have_none(org, runtime):
    call_id, _ = runtime.start()
    runtime.complete(call_id)
    assert {e.type for e in events(org)} == {"contact.created", "call.ended"}
    assert {e.location_id for e in events(org)} == {None}
