"""calls 0019 keeps every row of the calls rollup: forward, the rows the triggers kept become the folded rows (same
ids, same figures) and the figures read the same; back, every delta is folded into them first, so the rollup is again
what the calls add up to, and calls 0017's triggers go on from there."""

from datetime import timedelta

import pytest
from django.db import connection

from calls.models import Booking, Call
from knowledge.services import location_create
from tests.support.migrations import graph, migrate
from tests.support.rollups import (
    METRICS,
    calls_around_midnight,
    expected_field_rollup,
    expected_rollup,
    stored_field_rollup,
    stored_rollup,
)
from tests.support.runtime import T0, Runtime, iso

BEFORE = ("calls", "0018_location_in_orgs")
KEY = "organization_id, day, location_id, outcome"


def _rows() -> list:
    """Every row of both rollups as stored before calls 0019 (the tables) and read after it (the views)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, {KEY}, {', '.join(METRICS)} FROM calls_callrollup ORDER BY id")  # noqa: S608
        calls = cursor.fetchall()
        cursor.execute(f"SELECT id, {KEY}, name, value_sum, value_count FROM calls_callfieldrollup ORDER BY id")  # noqa: S608
        return [calls, cursor.fetchall()]


def _figures(org):
    return stored_rollup(org), stored_field_rollup(org)


def _expected(org):
    return expected_rollup(org), expected_field_rollup(org)


def _book(runtime, call_id, hours):
    start = T0 + timedelta(days=1, hours=hours)
    Booking.objects.create(organization=runtime.org, call=runtime.call(call_id), start_at=start,
                           end_at=start + timedelta(hours=1), timezone="UTC")


def _with_fields(call_ids):
    for index, call_id in enumerate(call_ids):
        Call.objects.filter(runtime_call_id=call_id).update(
            fields={"party_size": {"type": "number", "value": index + 0.5}} if index % 2 else {})


@pytest.mark.django_db(transaction=True)
def test_the_rollup_keeps_every_row_through_the_migration_and_back(org, other_org):
    leaves = graph().leaf_nodes()
    before = [*(node for node in leaves if node[0] != "calls"), BEFORE]
    la = location_create(org=org, name="LA", address="1 Main St", timezone="America/Los_Angeles",
                         phone_number="+13105550100")
    runtime, other = Runtime(org), Runtime(other_org)
    migrate(before)
    try:
        # Written by calls 0017's triggers, into the rollup's own rows.
        made = calls_around_midnight(runtime, [la.pk, None])
        calls_around_midnight(other, [None])
        _with_fields(made)
        _book(runtime, made[1], 0)
        rows = _rows()
        assert rows[0] and rows[1]
        assert _figures(org) == _expected(org) and _figures(other_org) == _expected(other_org)

        migrate(leaves)
        assert _rows() == rows  # the same rows, ids included: renamed, not copied
        assert _figures(org) == _expected(org)

        # Deltas beside them, then back: folded into the rows.
        ended = iso(T0 + timedelta(hours=9))
        assert runtime.complete(made[4], outcome="booking", order=None, ended_at=ended).status_code == 200
        more = calls_around_midnight(runtime, [None])
        _with_fields(more)
        _book(runtime, made[1], 2)
        _book(runtime, more[3], 4)
        expected = _expected(org)
        assert _figures(org) == expected and _rows() != rows
        migrate(before)
        assert _figures(org) == expected and _figures(other_org) == _expected(other_org)
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM calls_callrollup GROUP BY organization_id, day, location_id, outcome"
                           " HAVING count(*) > 1")
            assert cursor.fetchall() == []  # one row per key, as calls 0017's upserts need

        # calls 0017's triggers go on from the folded rows.
        assert runtime.complete(more[4], outcome="moved", order=None, ended_at=ended).status_code == 200
        _book(runtime, more[4], 6)
        assert _figures(org) == _expected(org)
        assert sum(row["bookings"] for row in stored_rollup(org).values()) == 4
    finally:
        migrate(leaves)
    assert _figures(org) == _expected(org) and _figures(other_org) == _expected(other_org)
