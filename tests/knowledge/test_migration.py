"""The move of locations, facts, team members, escalation rules and calendars into the knowledge app is Django state
only: run forward on a database holding a row in every affected table, it keeps every row, every link between them
and every column, index and constraint, and the other apps' foreign keys work through the new models."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db.models import ProtectedError

from calls.models import Booking, Call, CallbackRequest, Escalation, Message
from knowledge.models import Calendar, EscalationRule, Fact, TeamMember
from notifications.models import NotificationRecipient
from orgs.models import Location
from tests.support.migrations import graph, migrate, parents_outside, schema

# The migrations of the move; the test starts from the database just before them (and whatever follows them in
# their apps).
MOVE = [("orgs", "0006_knowledge_models_moved"), ("calls", "0010_knowledge_models_moved"),
        ("notifications", "0003_team_member_in_knowledge")]
TABLES = ["orgs_location", "orgs_fact", "orgs_teammember", "calls_escalationrule", "calls_calendar", "calls_call",
          "calls_booking", "calls_callbackrequest", "calls_message", "calls_escalation",
          "notifications_notificationrecipient"]


def _rows_in_the_old_apps(apps) -> dict:
    """One row in each table, written with the models as they were before the move (orgs and calls)."""
    org = apps.get_model("orgs", "Organization").objects.create(name="Old Pizza")
    user = apps.get_model("auth", "User").objects.create(username="old@example.com")
    location = apps.get_model("orgs", "Location").objects.create(
        organization=org, name="Downtown", address="1 Main St", timezone="Europe/Paris", phone_number="+14155550100")
    fact = apps.get_model("orgs", "Fact").objects.create(organization=org, label="Hours", content="9-5",
                                                         location=location)
    member = apps.get_model("orgs", "TeamMember").objects.create(organization=org, name="Dana", user=user)
    rule = apps.get_model("calls", "EscalationRule").objects.create(
        organization=org, name="Allergies", keywords=["nuts"], destination_type="team_member",
        destination_team_member=member, location=location)
    calendar = apps.get_model("calls", "Calendar").objects.create(
        organization=org, name="Tables", location=location, weekly_hours=[{"day": "mon", "start": "09:00",
                                                                            "end": "17:00"}])
    start = datetime(2030, 1, 7, 9, tzinfo=UTC)
    call = apps.get_model("calls", "Call").objects.create(organization=org, runtime_call_id="rt-1",
                                                          started_at=start, location=location)
    rows = {
        "org": org.pk, "user": user.pk, "location": location.pk, "fact": fact.pk, "member": member.pk,
        "rule": rule.pk, "calendar": calendar.pk, "call": call.pk,
        "callback": apps.get_model("calls", "CallbackRequest").objects.create(
            organization=org, call=call, requested_window="asap", reason="x", requested_team_member=member).pk,
        "message": apps.get_model("calls", "Message").objects.create(
            organization=org, call=call, message="Call back", for_team_member=member).pk,
        "escalation": apps.get_model("calls", "Escalation").objects.create(
            organization=org, call=call, rule=rule, rule_name=rule.name, destination_type="team_member",
            destination_team_member=member, triggered_by="keyword").pk,
        "booking": apps.get_model("calls", "Booking").objects.create(
            organization=org, calendar=calendar, call=call, location=location, start_at=start,
            end_at=start + timedelta(hours=1), timezone="Europe/Paris").pk,
        "recipient": apps.get_model("notifications", "NotificationRecipient").objects.create(
            organization=org, team_member=member, messages=True).pk,
    }
    return rows


@pytest.mark.django_db(transaction=True)
def test_the_move_keeps_every_row_link_and_table_definition():
    leaves = graph().leaf_nodes()
    before = parents_outside(MOVE)
    rows = _rows_in_the_old_apps(migrate([*before, ("knowledge", None)]))
    schema_before = schema(TABLES)

    # The schema right after the move (later migrations of these apps may change these tables), then the rest.
    migrate([*MOVE, ("knowledge", "0001_initial")])
    assert schema(TABLES) == schema_before
    migrate(leaves)
    location = Location.objects.get(pk=rows["location"])
    assert (location.organization_id, location.name, location.timezone) == (rows["org"], "Downtown", "Europe/Paris")
    assert Fact.objects.get(pk=rows["fact"]).location == location
    member = TeamMember.objects.get(pk=rows["member"])
    assert (member.name, member.user_id, member.is_platform_user) == ("Dana", rows["user"], True)
    rule = EscalationRule.objects.get(pk=rows["rule"])
    assert (rule.destination_team_member, rule.location, rule.keywords) == (member, location, ["nuts"])
    calendar = Calendar.objects.get(pk=rows["calendar"])
    assert (calendar.location, calendar.weekly_hours[0]["day"]) == (location, "mon")
    assert Call.objects.get(pk=rows["call"]).location == location
    assert CallbackRequest.objects.get(pk=rows["callback"]).requested_team_member == member
    assert Message.objects.get(pk=rows["message"]).for_team_member == member
    escalation = Escalation.objects.get(pk=rows["escalation"])
    assert (escalation.rule, escalation.destination_team_member) == (rule, member)
    booking = Booking.objects.get(pk=rows["booking"])
    assert (booking.calendar, booking.location, booking.call_id) == (calendar, location, rows["call"])
    assert NotificationRecipient.objects.get(pk=rows["recipient"]).team_member == member
    assert list(calendar.bookings.all()) == [booking]
    assert list(member.escalation_rules.all()) == [rule]
    assert list(location.facts.all()) == [Fact.objects.get(pk=rows["fact"])]

    # The other apps' on_delete rules act through the new models.
    with pytest.raises(ProtectedError):
        member.delete()
    calendar.delete()
    assert Booking.objects.get(pk=rows["booking"]).calendar_id is None
    location.delete()
    assert (Call.objects.get(pk=rows["call"]).location_id, Fact.objects.get(pk=rows["fact"]).location_id) == (None,
                                                                                                               None)
    assert not EscalationRule.objects.filter(pk=rows["rule"]).exists()  # CASCADE, as before
    member.delete()
    assert not NotificationRecipient.objects.filter(pk=rows["recipient"]).exists()
    assert Message.objects.get(pk=rows["message"]).for_team_member_id is None
