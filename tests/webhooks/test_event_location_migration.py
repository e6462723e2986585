"""The migration that gives events a location fills it for events written before it: the location of the call they
name, a booking's own for `call.appointment_booked`, none for the rest."""

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.migrations import graph, migrate
from webhooks.models import Event

BEFORE = ("webhooks", "0008_purge_brin_indexes")


def _event(apps, org, type_, call_id, data):
    Event_ = apps.get_model("webhooks", "Event")
    return Event_.objects.create(id=f"evt_{uuid.uuid4().hex}", organization=org, type=type_,
                                 created_at=datetime.now(UTC), call_id=call_id,
                                 payload=json.dumps({"data": data}).encode()).pk


@pytest.mark.django_db(transaction=True)
def test_events_written_before_the_migration_get_their_calls_or_bookings_location():
    leaves = graph().leaf_nodes()
    # Every other app stays at its newest, so the rows below are written as the other apps' models are now.
    apps = migrate([*(node for node in leaves if node[0] != "webhooks"), BEFORE])
    org = apps.get_model("orgs", "Organization").objects.create(name="Old Pizza")
    location = apps.get_model("orgs", "Location")
    l1 = location.objects.create(organization=org, name="Mission", timezone="UTC")
    l2 = location.objects.create(organization=org, name="Castro", timezone="UTC")
    start = datetime(2030, 1, 7, 9, tzinfo=UTC)
    call = apps.get_model("calls", "Call").objects.create(organization=org, runtime_call_id="rt-1",
                                                          started_at=start, location=l1)
    unlocated = apps.get_model("calls", "Call").objects.create(organization=org, runtime_call_id="rt-2",
                                                               started_at=start)
    calendar = apps.get_model("knowledge", "Calendar").objects.create(organization=org, name="Tables", location=l2)
    booking = apps.get_model("calls", "Booking").objects.create(
        organization=org, calendar=calendar, call=call, location=l2, start_at=start, end_at=start + timedelta(hours=1))
    ids = {
        "ended": _event(apps, org, "call.ended", call.pk, {"call_id": str(call.pk)}),
        "contact": _event(apps, org, "contact.created", call.pk, {"first_call_id": str(call.pk)}),
        "booked": _event(apps, org, "call.appointment_booked", call.pk, {"booking_id": str(booking.pk)}),
        "unlocated": _event(apps, org, "call.ended", unlocated.pk, {"call_id": str(unlocated.pk)}),
        "meeting": _event(apps, org, "meeting.outcome_approved", None, {}),
    }

    migrate(leaves)

    located = dict(Event.objects.values_list("pk", "location_id"))
    assert {name: located[pk] for name, pk in ids.items()} == {
        "ended": l1.pk, "contact": l1.pk, "booked": l2.pk, "unlocated": None, "meeting": None}
