"""The rollup's update trigger on bulk statements, with the plans PostgreSQL keeps (calls 0021): a statement that
moves many calls at once (a location's deletion sets its calls' location to null; a sweep or an erasure updates
batches) keeps the figures exact after single-call writes have made the connection's plans, and the trigger never
pairs a bulk update's old and new rows by joining or scanning one transition table per row of the other, which a
plan made for one row ran in time quadratic in the rows (bench.analytics times one such update)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import F, Value
from django.db.models.functions import Coalesce

from calls.models import Call
from knowledge.services import location_create, location_delete
from tests.support.rollups import expected_field_rollup, expected_rollup, stored_field_rollup, stored_rollup
from tests.support.runtime import T0

pytestmark = pytest.mark.django_db

_OUTCOMES = ["order", "booking", "question", "message", ""]


def _calls(org, location, count: int) -> list[Call]:
    return Call.objects.bulk_create([Call(
        organization=org, location=location, runtime_call_id=f"bulk-{n}", status="completed",
        started_at=T0 + timedelta(minutes=37 * n), duration_seconds=30 + n, outcome=_OUTCOMES[n % 5],
        classification="real_engagement" if n % 3 else "robocall", disposition="escalated" if n % 7 == 0 else "",
        scorable=n % 4 != 0, score=n % 90, unanswered_questions=["Vegan?"] * (n % 3),
        fields={"party_size": {"type": "number", "value": n + 0.25}} if n % 2 else {},
    ) for n in range(count)])


def test_bulk_updates_after_single_call_writes_keep_the_figures_exact(org):
    la = location_create(org=org, name="LA", address="2 Main St", timezone="America/Los_Angeles",
                         phone_number="+13105550100")
    calls = _calls(org, la, 240)
    # Single-call writes first, more than the five PostgreSQL plans afresh: the connection keeps its plans, made for
    # one row, for the bulk statements below.
    for call in calls[:8]:
        Call.objects.filter(pk=call.pk).update(score=F("score") + 1)
    assert stored_rollup(org) == expected_rollup(org)

    # Some calls' figures move and some do not, in one statement: scores, outcomes (a new key), number fields, and a
    # change of nothing counted.
    Call.objects.filter(organization=org).update(score=Coalesce(F("score"), Value(0)) + 3)
    Call.objects.filter(organization=org, outcome="question").update(outcome="message")
    Call.objects.filter(organization=org, duration_seconds__lt=150).update(
        fields={"party_size": {"type": "number", "value": 4}, "note": {"type": "string", "value": "x"}})
    Call.objects.filter(organization=org).update(summary="Redacted")
    assert stored_rollup(org) == expected_rollup(org)
    assert stored_field_rollup(org) == expected_field_rollup(org) != {}

    location_delete(location=la)  # every call of the location moves to no location, in one statement
    assert not Call.objects.filter(location_id=la.pk).exists()
    assert stored_rollup(org) == expected_rollup(org)
    assert stored_field_rollup(org) == expected_field_rollup(org)


def test_a_bulk_update_joins_no_transition_table_and_plans_are_generic():
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_functiondef('calls_rollup_on_call'::regproc), "
                       "(SELECT proconfig FROM pg_proc WHERE oid = 'calls_rollup_on_call'::regproc)")
        definition, config = cursor.fetchone()
    # An update of one call keeps 0019's join of two one-row tables; an update of more pairs them by a window.
    one_row, bulk = definition.split("ELSIF (SELECT count(*) FROM new_rows) = 1 THEN", 1)[1].split("    ELSE\n", 1)
    assert "JOIN new_rows" in one_row
    assert config == ["plan_cache_mode=force_generic_plan"]
    for quadratic in ("JOIN new_rows", "JOIN old_rows", "= ANY("):
        assert quadratic not in bulk, quadratic
