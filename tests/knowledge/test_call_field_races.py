"""Two writes racing to give one call field name to the same location: the organization's row lock decides, so one
wins and the other is the 409, never two definitions that meet (no constraint could compare their lists). Five
rounds of each, two threads released together."""

import pytest

from core.errors import Conflict
from knowledge.models import CallField
from knowledge.services import call_field_create, call_field_update, location_create
from tests.support.races import run_together

pytestmark = pytest.mark.django_db(transaction=True)


def _meeting(org, name) -> list[tuple]:
    """The pairs of definitions of `name` whose locations meet (null meets every list but an empty one)."""
    rows = list(CallField.objects.filter(organization=org, name=name).values_list("pk", "location_ids"))
    return [(a, b) for i, (a, la) in enumerate(rows) for b, lb in rows[i + 1:]
            if (la is None and lb != []) or (lb is None and la != []) or (la and lb and set(la) & set(lb))]


def _one_won(outcomes) -> None:
    assert sorted(type(outcome).__name__ for outcome in outcomes) == ["CallField", "Conflict"], outcomes


@pytest.mark.parametrize("race", ["two creates", "create and move", "create for all and create for one"])
def test_two_writes_never_leave_two_definitions_that_meet(org, race):
    l1, l2 = (location_create(org=org, name=name, address="x", timezone="UTC", phone_number="+14155550100")
              for name in ("L1", "L2"))
    for n in range(5):
        name = f"field_{n}"

        def create(location_ids, name=name):
            return lambda: call_field_create(org=org, name=name, label="F", type="string", location_ids=location_ids)

        if race == "two creates":
            outcomes = run_together(create([l1.pk]), create([l1.pk, l2.pk]))
        elif race == "create and move":
            there = call_field_create(org=org, name=name, label="F", type="string", location_ids=[l2.pk])
            outcomes = run_together(create([l1.pk]), lambda there=there: call_field_update(
                call_field=CallField.objects.get(pk=there.pk), location_ids=[l1.pk, l2.pk]))
        else:
            outcomes = run_together(create(None), create([l2.pk]))
        _one_won(outcomes)
        assert _meeting(org, name) == []
        assert all(isinstance(outcome, CallField | Conflict) for outcome in outcomes)
