"""simulate_calls drives the runtime API; every event it causes matches its type's schema
(docs/webhooks.md#event-types)."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from calls.models import Call, Order
from devtools.simulation import SCENARIOS
from knowledge.services import call_field_create, fact_create, location_create, team_member_create
from tests.support.events import assert_valid_event, events
from webhooks.models import EVENT_TYPES


def _simulate(org, *args) -> list[dict]:
    out = StringIO()
    call_command("simulate_calls", "--org", str(org.id), *args, stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


@pytest.fixture
def furnished_org(org):
    location_create(org=org, name="Mission Street", address="2101 Mission St", timezone="America/Los_Angeles",
                    phone_number="+14155550142")
    fact_create(org=org, label="Opening hours", content="Open every day 11:00-22:00.")
    fact_create(org=org, label="Parking", content="Free parking behind the store after 6 pm.")
    team_member_create(org=org, name="Maria Lopez", email="maria@example.com", phone_number="+14155550111")
    return org


def test_every_scenario_runs_and_every_event_validates_against_its_schema(furnished_org):
    lines = []
    for scenario in SCENARIOS:
        lines += _simulate(furnished_org, "--scenario", scenario, "--count", "2", "--seed", "7")
    assert {line["scenario"] for line in lines} == set(SCENARIOS)
    assert all(set(line) == {"call_id", "scenario"} for line in lines)
    assert Call.objects.filter(organization=furnished_org, pk__in=[line["call_id"] for line in lines]).count() == len(
        {line["call_id"] for line in lines}
    )
    emitted = events(furnished_org)
    # Every call event; not the meetings product's, the privacy ones (nothing is deleted or erased here), the alerts'
    # or the webhook subscriptions' operational ones.
    assert {e.type for e in emitted} == set(EVENT_TYPES) - {
        "meeting.outcome_approved", "call.content_deleted", "contact.erased",
        "alert.triggered", "alert.resolved", "location.line_silent",
        "webhook_subscription.failing", "webhook_subscription.disabled", "webhook_subscription.recovered"}
    for event in emitted:
        assert_valid_event(event)
    assert Order.objects.filter(canceled_by="caller_via_phone").count() == 2


def test_mixed_is_the_default_and_quotes_are_transcript_substrings(furnished_org):
    lines = _simulate(furnished_org, "--count", "25", "--seed", "11")
    assert len({line["scenario"] for line in lines}) >= 6
    for call in Call.objects.filter(organization=furnished_org):
        for check in call.quality_checks:
            assert check["verification"] == "verified", (call.id, check)
    for event in events(furnished_org):
        assert_valid_event(event)


def test_the_org_s_call_fields_are_reported_on_real_engagements_with_verified_quotes(furnished_org):
    here = location_create(org=furnished_org, name="Valencia", address="1 Valencia St", timezone="UTC",
                           phone_number="+14155550143")
    call_field_create(org=furnished_org, name="party_size", label="Party size", type="number", required=True)
    call_field_create(org=furnished_org, name="seating", label="Seating", type="enum", choices=["inside", "patio"],
                      required=True, location_ids=[here.pk])
    call_field_create(org=furnished_org, name="pickup_date", label="Pickup date", type="date")
    _simulate(furnished_org, "--count", "12", "--seed", "3")
    real = Call.objects.filter(organization=furnished_org, classification="real_engagement")
    assert real.exists()
    for call in real:
        expected = {"party_size", "pickup_date"} | ({"seating"} if call.location_id == here.pk else set())
        assert set(call.fields) == expected, call.fields
        assert all(entry["evidence_verified"] for entry in call.fields.values())
    for event in events(furnished_org):
        assert_valid_event(event)


def test_simulator_works_on_a_bare_org(org):
    lines = _simulate(org, "--count", "12", "--seed", "5")
    assert lines
    for event in events(org):
        assert_valid_event(event)


def test_simulator_refuses_an_unknown_org(db):
    with pytest.raises(CommandError):
        call_command("simulate_calls", "--org", "00000000-0000-0000-0000-000000000000", stdout=StringIO())


def test_simulator_skips_recordings_where_the_org_does_not_record(org):
    org.call_recording_enabled = False
    org.save()
    _simulate(org, "--scenario", "recording_first", "--count", "2")
    assert not [e for e in events(org) if e.type == "call.recording_ready"]
