"""Outcomes of the meetings tests in each stage (drafted, approved, dispatched), built through the services."""

from datetime import UTC, datetime

import pytest

from meetings.services import meeting_ingest, outcome_approve, outcome_dispatch
from tests.factories import MembershipFactory, OrganizationFactory
from tests.support.meetings import valid_outcome
from tests.support.webhooks import make_subscription
from webhooks.models import Event


@pytest.fixture
def meetings_org(db):
    return OrganizationFactory(name="Meetings Co", meetings_enabled=True)


@pytest.fixture
def meetings_admin(meetings_org):
    return MembershipFactory(organization=meetings_org, role="admin").user


@pytest.fixture
def meetings_member(meetings_org):
    return MembershipFactory(organization=meetings_org, role="member").user


@pytest.fixture
def subscription(meetings_org):
    return make_subscription(meetings_org, events=("meeting.outcome_approved",))


@pytest.fixture
def draft(meetings_org):
    """A drafted outcome (ingested through the service)."""
    _, outcome, _ = meeting_ingest(
        org=meetings_org, runtime_meeting_id="rt-draft", title="Checkout reliability sync",
        started_at=datetime(2026, 11, 20, 15, tzinfo=UTC), outcome=valid_outcome(),
    )
    return outcome


@pytest.fixture
def approved(draft, meetings_admin):
    return outcome_approve(outcome=draft, by=meetings_admin)


@pytest.fixture
def dispatched(approved, meetings_admin, subscription):
    """(dispatch, status_url) of a freshly dispatched outcome; the URL comes from the emitted event."""
    dispatch = outcome_dispatch(outcome=approved, by=meetings_admin)
    event = Event.objects.get(pk=dispatch.event_id)
    return dispatch, event.data["status_url"]
