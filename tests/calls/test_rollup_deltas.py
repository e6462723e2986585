"""The calls rollup without a hot row (calls 0019): a call's write appends its figures to a delta table instead of
updating the row of its key, so concurrent writers of one organization's busy key never wait for each other; the
periodic fold moves the deltas into the rows; and every read (the CallRollup view, the analytics) is exact before,
during and after a fold."""

import threading
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.db.models import Sum

from calls.models import (
    Call,
    CallFieldRollupDelta,
    CallFieldRollupFolded,
    CallRollup,
    CallRollupDelta,
    CallRollupFolded,
)
from calls.services.rollup import rollup_fold
from calls.tasks import fold_rollup
from core.outbox import task_queue
from knowledge.services import location_create
from orgs.models import Organization
from tests.support.analytics import analytics_world
from tests.support.database import connect
from tests.support.races import run_together
from tests.support.rollups import (
    calls_around_midnight,
    expected_field_rollup,
    expected_rollup,
    stored_field_rollup,
    stored_rollup,
)
from tests.support.runtime import T0, Runtime, iso

RANGE = {"since": "2026-09-25", "until": "2026-11-07"}


@pytest.fixture
def world(org, other_org):
    return analytics_world(org, other_org)


def _folded(org) -> dict:
    return {(row.day, row.location_id, row.outcome): row.calls
            for row in CallRollupFolded.objects.filter(organization=org) if row.calls}


def _places(org):
    ny = location_create(org=org, name="NY", address="1 Main St", timezone="America/New_York",
                         phone_number="+12125550100")
    la = location_create(org=org, name="LA", address="2 Main St", timezone="America/Los_Angeles",
                         phone_number="+13105550100")
    return ny, la


@pytest.mark.django_db(transaction=True)
def test_two_writers_of_one_key_never_wait_for_each_other(org):
    """Before: the first writer's upsert held the key's row until it committed, and the second waited on it."""
    la = location_create(org=org, name="LA", address="1 Main St", timezone="America/Los_Angeles",
                         phone_number="+13105550100")
    runtime = Runtime(org)
    first, _ = runtime.start(started_at=T0, location_id=la.pk)
    second, _ = runtime.start(started_at=T0 + timedelta(minutes=1), location_id=la.pk)
    complete = "UPDATE calls_call SET status = 'completed', outcome = 'order' WHERE runtime_call_id = %s"
    with connect() as holder, connect() as writer:
        holder.execute(complete, [first])  # its transaction stays open: what it locked stays locked
        writer.execute("SET lock_timeout = '5s'")
        writer.execute(complete, [second])
        writer.commit()
        holder.commit()
    assert stored_rollup(org) == expected_rollup(org)
    assert stored_rollup(org)[(T0.date(), la.pk, "order")]["calls"] == 2  # the org's zone is UTC


def test_the_fold_moves_every_delta_into_the_rows_and_no_figure_moves(org, other_org, runtime, other_runtime):
    ny, la = _places(org)
    made = calls_around_midnight(runtime, [ny.pk, la.pk, None])
    calls_around_midnight(other_runtime, [None])
    for index, call_id in enumerate(made):
        Call.objects.filter(runtime_call_id=call_id).update(
            fields={"party_size": {"type": "number", "value": index + 0.5}} if index % 2 else {})
    before = (stored_rollup(org), stored_field_rollup(org), stored_rollup(other_org))
    assert before == (expected_rollup(org), expected_field_rollup(org), expected_rollup(other_org))
    deltas = CallRollupDelta.objects.count() + CallFieldRollupDelta.objects.count()
    assert deltas > 0 and not CallRollupFolded.objects.exists()

    assert rollup_fold(batch=3) == deltas  # in transactions of 3 rows of each table

    assert not CallRollupDelta.objects.exists() and not CallFieldRollupDelta.objects.exists()
    assert (stored_rollup(org), stored_field_rollup(org), stored_rollup(other_org)) == before
    assert _folded(org) == {key: row["calls"] for key, row in expected_rollup(org).items() if row["calls"]}
    assert CallFieldRollupFolded.objects.filter(organization=org).count() == len(expected_field_rollup(org))
    assert rollup_fold() == 0

    # Later writes are deltas again, read with the folded rows.
    ended = iso(T0 + timedelta(hours=9))
    assert runtime.complete(made[4], outcome="booking", order=None, ended_at=ended).status_code == 200
    assert CallRollupDelta.objects.exists()
    assert stored_rollup(org) == expected_rollup(org)


def test_the_analytics_read_the_same_unfolded_half_folded_and_folded(api, org, world):  # noqa: F811
    answers = {group_by: api.get("/v1/analytics/calls", {**RANGE, "group_by": group_by}).json()["data"]
               for group_by in ("day", "week", "location", "outcome")}
    pending = CallRollupDelta.objects.count()
    with connection.cursor() as cursor:
        cursor.execute("SELECT calls_rollup_fold(%s)", [pending // 2])  # the oldest half of each table
    assert 0 < CallRollupDelta.objects.count() < pending
    for group_by, answer in answers.items():
        assert api.get("/v1/analytics/calls", {**RANGE, "group_by": group_by}).json()["data"] == answer, group_by
    rollup_fold()
    assert not CallRollupDelta.objects.exists() and not CallFieldRollupDelta.objects.exists()
    for group_by, answer in answers.items():
        assert api.get("/v1/analytics/calls", {**RANGE, "group_by": group_by}).json()["data"] == answer, group_by
    assert answers["week"]["totals"]["calls"] == len(world)


@pytest.mark.django_db(transaction=True)
def test_reads_stay_exact_while_folds_run_beside_writers_and_a_zone_change(org):
    """Every call start adds one call and nothing else moves the org's total (a completion moves a call between keys,
    a fold between tables, a zone change between days): a read that counted a delta twice, or missed one, would see
    the total go past the calls started, or go down."""
    la = location_create(org=org, name="LA", address="1 Main St", timezone="America/Los_Angeles",
                         phone_number="+13105550100")
    writers, each = 4, 5
    done = threading.Event()
    finished = []
    totals = []

    def write(number):
        runtime = Runtime(org)
        for n in range(each):
            call_id, response = runtime.start(started_at=T0 + timedelta(minutes=n), location_id=la.pk)
            assert response.status_code == 201, response.content
            ended = iso(T0 + timedelta(hours=1))
            extra = {"outcome": "question", "order": None} if n % 2 else {"outcome": "order"}
            assert runtime.complete(call_id, ended_at=ended, **extra).status_code == 200
        finished.append(number)
        if len(finished) == writers:
            done.set()
        return "written"

    def fold():
        while not done.is_set():
            rollup_fold(batch=2)
        return "folded"

    def read():
        while not done.is_set():
            totals.append(CallRollup.objects.filter(organization=org).aggregate(n=Sum("calls"))["n"] or 0)
        return "read"

    def change_zone():
        return Organization.objects.filter(pk=org.pk).update(time_zone="Asia/Kathmandu")

    results = run_together(*(lambda number=number: write(number) for number in range(writers)), fold, read,
                           change_zone, timeout=120)
    assert results == ["written"] * writers + ["folded", "read", 1]
    assert len(totals) > 1 and totals == sorted(totals) and totals[-1] <= writers * each
    assert stored_rollup(org) == expected_rollup(org)
    assert sum(row["calls"] for row in stored_rollup(org).values()) == writers * each
    rollup_fold()
    assert not CallRollupDelta.objects.exists()
    assert stored_rollup(org) == expected_rollup(org)


@pytest.mark.django_db(transaction=True)
def test_a_fold_that_finds_another_at_work_leaves_at_once(org):
    Runtime(org).start(started_at=T0)
    with connect() as other:
        assert other.execute("SELECT calls_rollup_fold(100)").fetchone() == (1,)  # not committed yet
        assert rollup_fold() == 0
        assert CallRollupDelta.objects.count() == 1
        other.commit()
    assert not CallRollupDelta.objects.exists()
    assert sum(row["calls"] for row in stored_rollup(org).values()) == 1


def test_beat_folds_every_five_seconds_on_the_maintenance_queue(org, runtime):
    entry = settings.CELERY_BEAT_SCHEDULE["calls-fold-rollup"]
    assert (entry["task"], entry["schedule"]) == ("calls.fold_rollup", 5)
    assert task_queue(fold_rollup) == "maintenance"
    runtime.start(started_at=T0)
    assert fold_rollup.apply().get() == 1
    assert not CallRollupDelta.objects.exists()
    assert _folded(org) == {(T0.date(), None, ""): 1}  # the org's zone is UTC


def test_an_organizations_deletion_takes_its_deltas_and_rows(org, other_org, runtime, other_runtime):
    runtime.start(started_at=T0)
    other_runtime.start(started_at=T0)
    rollup_fold()
    runtime.start(started_at=T0 + timedelta(days=1))
    Organization.objects.get(pk=org.pk).delete()
    assert not CallRollupDelta.objects.filter(organization_id=org.pk).exists()
    assert not CallRollupFolded.objects.filter(organization_id=org.pk).exists()
    assert stored_rollup(other_org) == expected_rollup(other_org) != {}
