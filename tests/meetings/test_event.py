"""`meeting.outcome_approved`: fires on dispatch (never on approval alone), only for orgs with the meetings product,
with exactly the fields of its schema (docs/webhooks.md#event-types); and the outcome lifecycle rules around it."""

import json
from urllib.parse import urlsplit

import pytest
from django.db import transaction

from core.errors import Forbidden, InvalidTransition, ValidationFailed
from meetings.models import Dispatch
from meetings.services import outcome_approve, outcome_dispatch, outcome_update
from meetings.tokens import digest_token
from orgs.errors import NotAnAdmin
from tests.factories import MembershipFactory
from tests.support.events import assert_valid_event
from tests.support.meetings import approved_events, token_of
from webhooks.models import Delivery, Event


def test_the_payload_matches_the_spec_table(dispatched, settings):
    dispatch, _ = dispatched
    event = Event.objects.get(pk=dispatch.event_id)
    envelope = json.loads(event.payload)
    assert_valid_event(event)
    data = envelope["data"]
    outcome = dispatch.outcome
    assert data["dispatch_id"] == str(dispatch.pk)
    assert data["outcome_id"] == str(outcome.pk)
    assert data["meeting_id"] == str(outcome.meeting_id)
    assert data["title"] == "Checkout reliability sync"
    assert data["tickets"] == outcome.tickets and data["action_items"][1]["due"] == "2026-12-04"
    assert data["schema_version"] == 1
    assert data["meeting_url"] == f"{settings.DASHBOARD_URL}/meetings/{outcome.meeting_id}"
    base = f"{settings.BASE_URL}/hooks/meeting-dispatches/{dispatch.pk}/status?token="
    assert data["status_url"].startswith(base)


def test_the_status_url_token_is_stored_only_as_its_digest(dispatched):
    dispatch, url = dispatched
    token = token_of(url)
    assert len(token) >= 43  # 32 random bytes, base64url
    dispatch.refresh_from_db()
    assert dispatch.token_digest == digest_token(token)
    assert token not in json.dumps([str(v) for v in Dispatch.objects.values().get(pk=dispatch.pk).values()])


def test_the_event_reaches_subscribers_of_the_type(dispatched, subscription):
    dispatch, _ = dispatched
    assert Delivery.objects.filter(event_id=dispatch.event_id, subscription=subscription).count() == 1


def test_approval_alone_emits_nothing(draft, meetings_admin, subscription):
    outcome_approve(outcome=draft, by=meetings_admin)
    assert approved_events(draft.organization) == []
    assert not Delivery.objects.exists()


def test_approving_twice_keeps_the_first_approval(approved, meetings_org):
    second_admin = MembershipFactory(organization=meetings_org, role="admin").user
    again = outcome_approve(outcome=approved, by=second_admin)
    assert again.approved_at == approved.approved_at and again.approved_by == approved.approved_by


def test_no_dispatch_before_approval(draft, meetings_admin, subscription):
    with pytest.raises(InvalidTransition):
        outcome_dispatch(outcome=draft, by=meetings_admin)
    assert not Dispatch.objects.exists() and approved_events(draft.organization) == []


def test_no_event_and_no_dispatch_for_an_org_without_the_product(approved, meetings_admin, meetings_org, subscription):
    meetings_org.meetings_enabled = False
    meetings_org.save(update_fields=["meetings_enabled"])
    with pytest.raises(Forbidden):
        outcome_dispatch(outcome=approved, by=meetings_admin)
    assert not Dispatch.objects.exists() and approved_events(meetings_org) == [] and not Delivery.objects.exists()


@pytest.mark.parametrize("role", ["member", "outsider"])
def test_only_admins_approve_and_dispatch(draft, meetings_admin, meetings_org, other_org, role, subscription):
    org = meetings_org if role == "member" else other_org
    user = MembershipFactory(organization=org, role="member" if role == "member" else "admin").user
    with pytest.raises(NotAnAdmin):
        outcome_approve(outcome=draft, by=user)
    draft.refresh_from_db()
    assert draft.approved_at is None
    approved = outcome_approve(outcome=draft, by=meetings_admin)
    with pytest.raises(NotAnAdmin):
        outcome_dispatch(outcome=approved, by=user)
    with pytest.raises(NotAnAdmin):
        outcome_update(outcome=approved, by=user, summary="Changed by a member. It should not stick.")
    assert not Dispatch.objects.exists() and approved_events(meetings_org) == []


def test_an_edit_withdraws_the_approval(approved, meetings_admin):
    edited = outcome_update(outcome=approved, by=meetings_admin, summary="A new summary. With two sentences.")
    assert edited.approved_at is None and edited.approved_by is None
    assert edited.summary == "A new summary. With two sentences."
    with pytest.raises(InvalidTransition):
        outcome_dispatch(outcome=edited, by=meetings_admin)


def test_an_edit_is_validated_like_ingestion(draft, meetings_admin):
    with pytest.raises(ValidationFailed) as caught:
        outcome_update(outcome=draft, by=meetings_admin, tickets=[{"title": "no other fields"}])
    assert "tickets.0.description" in caught.value.details["fieldErrors"]
    draft.refresh_from_db()
    assert draft.tickets[0]["title"].startswith("Make the payment")


def test_a_dispatched_outcome_can_no_longer_be_edited(dispatched, meetings_admin):
    dispatch, _ = dispatched
    with pytest.raises(InvalidTransition):
        outcome_update(outcome=dispatch.outcome, by=meetings_admin, summary="Too late. It was sent.")


def test_each_dispatch_is_its_own_event_with_its_own_token(dispatched, meetings_admin):
    first, first_url = dispatched
    second = outcome_dispatch(outcome=first.outcome, by=meetings_admin)
    second_url = Event.objects.get(pk=second.event_id).data["status_url"]
    assert second.pk != first.pk and second.event_id != first.event_id
    assert token_of(second_url) != token_of(first_url)
    assert urlsplit(second_url).path.endswith(f"/{second.pk}/status")


def test_a_rolled_back_dispatch_emits_nothing(approved, meetings_admin, meetings_org):
    with pytest.raises(RuntimeError), transaction.atomic():
        outcome_dispatch(outcome=approved, by=meetings_admin)
        raise RuntimeError("the caller's transaction fails afterwards")
    assert not Dispatch.objects.exists() and approved_events(meetings_org) == []
