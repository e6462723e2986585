"""Locations moving back from knowledge to orgs (orgs 0014, calls 0019, privacy 0003, knowledge 0004) is Django state
only: run forward on a database holding a row in every table that references a location, it keeps every row, every
link and every column, index and constraint, and deletes act through the new model as before."""

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.contenttypes.models import ContentType

from calls.models import Booking, Call
from knowledge.models import Calendar, EscalationRule, Fact
from orgs.models import ApiKey, Location
from privacy.models import LocationRetention
from tests.support.migrations import graph, migrate, parents_outside, schema

MOVE = [("orgs", "0014_location"), ("calls", "0018_location_in_orgs"), ("privacy", "0003_location_in_orgs"),
        ("knowledge", "0005_location_in_orgs"), ("alerts", "0002_location_in_orgs")]
TABLES = ["orgs_location", "orgs_fact", "calls_escalationrule", "calls_calendar", "calls_call", "calls_booking",
          "privacy_locationretention", "orgs_apikey"]


def _rows_before_the_move(apps) -> dict:
    org = apps.get_model("orgs", "Organization").objects.create(name="Old Pizza")
    location = apps.get_model("knowledge", "Location").objects.create(
        organization=org, name="Downtown", address="1 Main St", timezone="Europe/Paris", phone_number="+14155550100")
    start = datetime(2030, 1, 7, 9, tzinfo=UTC)
    calendar = apps.get_model("knowledge", "Calendar").objects.create(organization=org, name="Tables",
                                                                      location=location, weekly_hours=[])
    call = apps.get_model("calls", "Call").objects.create(organization=org, runtime_call_id="rt-1", started_at=start,
                                                          location=location)
    return {
        "org": org.pk, "location": location.pk, "calendar": calendar.pk, "call": call.pk,
        "fact": apps.get_model("knowledge", "Fact").objects.create(organization=org, label="Hours", content="9-5",
                                                                   location=location).pk,
        "rule": apps.get_model("knowledge", "EscalationRule").objects.create(
            organization=org, name="Allergies", keywords=["nuts"], destination_type="phone",
            destination_phone="+14155550101", location=location).pk,
        "booking": apps.get_model("calls", "Booking").objects.create(
            organization=org, calendar=calendar, call=call, location=location, start_at=start,
            end_at=start + timedelta(hours=1), timezone="Europe/Paris").pk,
        "retention": apps.get_model("privacy", "LocationRetention").objects.create(
            organization=org, location=location, recordings_days=30).pk,
        "key": apps.get_model("orgs", "ApiKey").objects.create(
            organization=org, name="Downtown only", key_prefix="va_live_abcd", key_digest="x" * 64,
            location_ids=[location.pk]).pk,
    }


@pytest.mark.django_db(transaction=True)
def test_the_move_keeps_every_row_link_and_table_definition():
    leaves = graph().leaf_nodes()
    rows = _rows_before_the_move(migrate(parents_outside(MOVE)))
    schema_before = schema(TABLES)

    migrate(MOVE)
    assert schema(TABLES) == schema_before
    migrate(leaves)
    location = Location.objects.get(pk=rows["location"])
    assert (location.organization_id, location.name, location.timezone) == (rows["org"], "Downtown", "Europe/Paris")
    assert ContentType.objects.get_for_model(Location).app_label == "orgs"
    assert Fact.objects.get(pk=rows["fact"]).location == location
    assert EscalationRule.objects.get(pk=rows["rule"]).location == location
    assert Calendar.objects.get(pk=rows["calendar"]).location == location
    assert Call.objects.get(pk=rows["call"]).location == location
    assert Booking.objects.get(pk=rows["booking"]).location == location
    assert LocationRetention.objects.get(pk=rows["retention"]).location == location
    assert ApiKey.objects.get(pk=rows["key"]).location_ids == [location.pk]
    assert list(location.facts.all()) == [Fact.objects.get(pk=rows["fact"])]

    # The references' on_delete rules act through the new model as before.
    location.delete()
    assert (Call.objects.get(pk=rows["call"]).location_id, Fact.objects.get(pk=rows["fact"]).location_id,
            Booking.objects.get(pk=rows["booking"]).location_id) == (None, None, None)
    assert not EscalationRule.objects.filter(pk=rows["rule"]).exists()
    assert not LocationRetention.objects.filter(pk=rows["retention"]).exists()
