"""The calls rollup (calls.models.CallRollup) stays equal to what the calls add up to, through every writer: the
runtime's start, events and completion, a booking, a location's deletion, a time zone change and an org's deletion."""

from datetime import timedelta

import pytest

from calls.models import Call, CallFieldRollup, CallRollup
from knowledge.services import location_create, location_delete
from orgs.models import Organization
from tests.support.bookings import MONDAY_1400Z, book
from tests.support.races import run_together
from tests.support.rollups import (
    calls_around_midnight,
    expected_field_rollup,
    expected_rollup,
    stored_field_rollup,
    stored_rollup,
)
from tests.support.runtime import T0, Runtime, iso


def test_the_rollup_equals_the_calls_through_every_writer(org, other_org, runtime, other_runtime, calendar):
    ny = location_create(org=org, name="NY", address="1 Main St", timezone="America/New_York",
                         phone_number="+12125550100")
    la = location_create(org=org, name="LA", address="2 Main St", timezone="America/Los_Angeles",
                         phone_number="+13105550100")
    Organization.objects.filter(pk=org.pk).update(time_zone="America/New_York")
    made = calls_around_midnight(runtime, [ny.pk, la.pk, None])
    calls_around_midnight(other_runtime, [None])
    assert book(runtime, calendar, MONDAY_1400Z, call_id=made[4]).status_code == 201
    assert book(runtime, calendar, MONDAY_1400Z + timedelta(hours=1), call_id=made[4]).status_code == 201
    assert stored_rollup(org) == expected_rollup(org)
    assert sum(row["bookings"] for row in stored_rollup(org).values()) == 2
    assert stored_rollup(other_org) == expected_rollup(other_org)

    # A completion after the booking moves the call's bookings to its new outcome.
    ended = iso(T0 + timedelta(hours=9))
    assert runtime.complete(made[4], outcome="booking", order=None, ended_at=ended).status_code == 200
    assert stored_rollup(org) == expected_rollup(org)

    # Number call fields: each value on its call's key; other types, and a value that is not a number, are not summed.
    for index, call_id in enumerate(made):
        fields = {"party_size": {"label": "Party size", "type": "number", "value": index + 0.5},
                  "note": {"type": "string", "value": "7"}, "broken": {"type": "number", "value": "7"}}
        Call.objects.filter(runtime_call_id=call_id).update(fields=fields if index % 3 else {})
    assert stored_field_rollup(org) == expected_field_rollup(org) != {}
    Call.objects.filter(runtime_call_id=made[1]).update(fields={}, outcome="moved")
    assert stored_rollup(org) == expected_rollup(org)  # an order stays on its call's key through later changes
    assert stored_field_rollup(org) == expected_field_rollup(org)

    # Another zone regroups every call into its new local days, in the same transaction.
    Organization.objects.filter(pk=org.pk).update(time_zone="Asia/Kathmandu")  # +05:45
    assert stored_rollup(org) == expected_rollup(org)
    assert stored_field_rollup(org) == expected_field_rollup(org)
    assert stored_rollup(other_org) == expected_rollup(other_org)

    location_delete(location=la)
    assert Call.objects.filter(location_id=la.pk).count() == 0
    assert stored_rollup(org) == expected_rollup(org)

    Call.objects.filter(runtime_call_id=made[2]).delete()
    assert stored_rollup(org) == expected_rollup(org)
    assert stored_field_rollup(org) == expected_field_rollup(org)

    Organization.objects.get(pk=org.pk).delete()
    assert not CallRollup.objects.filter(organization_id=org.pk).exists()
    assert not CallFieldRollup.objects.filter(organization_id=org.pk).exists()
    assert stored_rollup(other_org) == expected_rollup(other_org)


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_and_a_zone_change_neither_lose_nor_double_a_call(org):
    """Calls of one location and day (one rollup row) started together, then completed together while the org's zone
    changes: every call counted once, in the zone that won (writers share a per-org lock the rebuild takes alone)."""
    la = location_create(org=org, name="LA", address="1 Main St", timezone="America/Los_Angeles",
                         phone_number="+13105550100")

    def start(index):
        call_id, response = Runtime(org).start(started_at=T0 + timedelta(minutes=index), location_id=la.pk)
        return call_id if response.status_code == 201 else response

    started = run_together(*(lambda index=index: start(index) for index in range(6)))
    assert all(isinstance(call_id, str) for call_id in started), started
    assert stored_rollup(org) == expected_rollup(org)

    def complete(index):
        body = {"outcome": ["order", "question", "booking"][index % 3], "ended_at": iso(T0 + timedelta(hours=1))}
        if body["outcome"] != "order":
            body["order"] = None
        return Runtime(org).complete(started[index], **body).status_code

    def change_zone():
        return Organization.objects.filter(pk=org.pk).update(time_zone="Asia/Kathmandu")

    results = run_together(*(lambda index=index: complete(index) for index in range(6)), change_zone)
    assert results == [200] * 6 + [1]
    assert stored_rollup(org) == expected_rollup(org)
    assert sum(row["calls"] for row in stored_rollup(org).values()) == 6
