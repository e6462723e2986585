"""`simulate_meeting --org ORG_ID [--dispatch]`: a realistic drafted outcome through the internal API; with
--dispatch, approved and dispatched as the org's first admin (product turned on), one JSON line out."""

import json
import uuid
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from meetings.models import Dispatch, Meeting
from tests.factories import MembershipFactory, OrganizationFactory
from webhooks.models import Event


def run(*args) -> dict:
    out = StringIO()
    call_command("simulate_meeting", *args, stdout=out)
    lines = out.getvalue().strip().splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


def test_it_creates_a_drafted_meeting_and_prints_its_ids(org):
    result = run("--org", str(org.pk))
    assert set(result) == {"meeting_id", "outcome_id", "dispatch_id"} and result["dispatch_id"] is None
    meeting = Meeting.objects.for_org(org).get(pk=result["meeting_id"])
    assert str(meeting.outcome.pk) == result["outcome_id"]
    assert meeting.runtime_meeting_id.startswith("sim_") and meeting.outcome.tickets
    assert meeting.outcome.approved_at is None
    org.refresh_from_db()
    assert org.meetings_enabled is False and not Event.objects.exists()


def test_with_dispatch_the_first_admin_approves_and_dispatches_turning_the_product_on(db):
    org = OrganizationFactory(meetings_enabled=False)
    first = MembershipFactory(organization=org, role="admin").user
    MembershipFactory(organization=org, role="admin")
    MembershipFactory(organization=org, role="member")
    result = run("--org", str(org.pk), "--dispatch")
    dispatch = Dispatch.objects.get(pk=result["dispatch_id"])
    assert str(dispatch.outcome_id) == result["outcome_id"]
    assert dispatch.created_by == first and dispatch.outcome.approved_by == first
    org.refresh_from_db()
    assert org.meetings_enabled is True
    event = Event.objects.get(pk=dispatch.event_id)
    assert event.type == "meeting.outcome_approved" and event.data["meeting_id"] == result["meeting_id"]


def test_an_unknown_org_is_an_error(db):
    with pytest.raises(CommandError):
        call_command("simulate_meeting", "--org", str(uuid.uuid4()), stdout=StringIO())


def test_dispatch_needs_an_admin(db):
    org = OrganizationFactory()
    with pytest.raises(CommandError):
        call_command("simulate_meeting", "--org", str(org.pk), "--dispatch", stdout=StringIO())
    assert not Meeting.objects.exists()
