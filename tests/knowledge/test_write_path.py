"""The one write path of the five knowledge kinds: a create, update or delete bumps the knowledge version exactly
once; a refused one bumps nothing and leaves the caller's object as it was (no page has to undo a service's
change); an update returns the saved copy; the actor is handed to the one place every write passes."""

from datetime import timedelta

import pytest
from django.utils import timezone

from calls.models import Booking
from core.errors import Conflict, ValidationFailed
from knowledge import services
from knowledge.models import Calendar, EscalationRule, Fact, TeamMember
from orgs.models import Location
from tests.support.knowledge import knowledge_version

HOURS = [{"day": day, "start": "00:00", "end": "24:00"} for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")]


def _create(kind, org, name, location=None, member=None):
    """A row of `kind` named `name`, through its service."""
    if kind == "location":
        return services.location_create(org=org, name=name, address="1 Main St", timezone="UTC",
                                        phone_number="+14155550100")
    if kind == "fact":
        return services.fact_create(org=org, label=name, content="c", location=location)
    if kind == "team_member":
        return services.team_member_create(org=org, name=name)
    if kind == "escalation_rule":
        return services.escalation_rule_create(org=org, name=name, destination_type="team_member",
                                               destination_team_member=member, keywords=["help"])
    return services.calendar_create(org=org, name=name, weekly_hours=HOURS)


UPDATE = {
    "location": lambda row, **changes: services.location_update(location=row, **changes),
    "fact": lambda row, **changes: services.fact_update(fact=row, **changes),
    "team_member": lambda row, **changes: services.team_member_update(member=row, **changes),
    "escalation_rule": lambda row, **changes: services.escalation_rule_update(rule=row, **changes),
    "calendar": lambda row, **changes: services.calendar_update(calendar=row, **changes),
}
DELETE = {
    "location": lambda row: services.location_delete(location=row),
    "fact": lambda row: services.fact_delete(fact=row),
    "team_member": lambda row: services.team_member_delete(member=row),
    "escalation_rule": lambda row: services.escalation_rule_delete(rule=row),
    "calendar": lambda row: services.calendar_delete(calendar=row),
}
MODELS = {"location": Location, "fact": Fact, "team_member": TeamMember, "escalation_rule": EscalationRule,
          "calendar": Calendar}
NAME = {"location": "name", "fact": "label", "team_member": "name", "escalation_rule": "name", "calendar": "name"}
KINDS = list(MODELS)


@pytest.fixture
def member(org):
    return services.team_member_create(org=org, name="Router")


@pytest.mark.parametrize("kind", KINDS)
def test_create_update_and_delete_each_bump_the_version_once(org, member, kind):
    before = knowledge_version(org)
    row = _create(kind, org, "First", member=member)
    assert knowledge_version(org) == before + 1
    saved = UPDATE[kind](row, **{NAME[kind]: "Second"})
    assert knowledge_version(org) == before + 2
    DELETE[kind](saved)
    assert knowledge_version(org) == before + 3
    assert not MODELS[kind].objects.filter(pk=row.pk).exists()


@pytest.mark.parametrize("kind", KINDS)
def test_an_update_returns_the_saved_copy_and_leaves_the_callers_object_alone(org, member, kind):
    row = _create(kind, org, "First", member=member)
    saved = UPDATE[kind](row, **{NAME[kind]: "  Second  "})
    assert saved is not row
    assert getattr(saved, NAME[kind]) == "Second"
    assert getattr(row, NAME[kind]) == "First"
    assert getattr(MODELS[kind].objects.get(pk=row.pk), NAME[kind]) == "Second"


@pytest.mark.parametrize("kind", KINDS)
def test_a_unique_clash_is_conflict_bumps_nothing_and_changes_nothing(org, member, kind):
    _create(kind, org, "Taken", member=member)
    row = _create(kind, org, "Mine", member=member)
    before = knowledge_version(org)
    if kind == "team_member":  # a team member's unique rule is its login, which only a create sets
        with pytest.raises(ValidationFailed):
            UPDATE[kind](row, name="")
    else:
        with pytest.raises(Conflict) as caught:
            UPDATE[kind](row, **{NAME[kind]: "Taken"})
        assert caught.value.field == NAME[kind]
    assert getattr(row, NAME[kind]) == "Mine"
    assert getattr(MODELS[kind].objects.get(pk=row.pk), NAME[kind]) == "Mine"
    assert knowledge_version(org) == before


def test_a_rule_refused_as_a_whole_leaves_the_callers_rule_as_it_was(org, member):
    rule = _create("escalation_rule", org, "Allergies", member=member)
    with pytest.raises(ValidationFailed):
        services.escalation_rule_update(rule=rule, destination_type="phone")  # no phone given
    assert (rule.destination_type, rule.destination_team_member_id) == ("team_member", member.pk)


def test_deleting_a_row_already_gone_does_nothing(org):
    fact = _create("fact", org, "Gone")
    Fact.objects.filter(pk=fact.pk).delete()
    before = knowledge_version(org)
    services.fact_delete(fact=fact)
    assert knowledge_version(org) == before


def test_a_calendar_with_an_upcoming_booking_is_kept_by_the_calls_apps_guard(org):
    calendar = _create("calendar", org, "Tables")
    start = timezone.now() + timedelta(days=1)
    Booking.objects.create(organization=org, calendar=calendar, start_at=start, end_at=start + timedelta(hours=1),
                           timezone="UTC")
    before = knowledge_version(org)
    with pytest.raises(Conflict) as caught:
        services.calendar_delete(calendar=calendar)
    assert caught.value.field == "bookings"
    assert Calendar.objects.filter(pk=calendar.pk).exists()
    assert knowledge_version(org) == before


def test_every_write_hands_its_actor_to_the_one_place_after_it(org, admin, monkeypatch):
    seen = []
    monkeypatch.setattr(services, "_changed", lambda **kw: seen.append((kw["action"], kw["kind"].model, kw["actor"])))
    location = services.location_create(org=org, name="A", address="a", timezone="UTC", phone_number="+14155550100",
                                        actor=admin)
    services.location_update(location=location, name="B", actor=admin)
    services.location_delete(location=location, actor=None)
    assert seen == [("create", Location, admin), ("update", Location, admin), ("delete", Location, None)]
