"""Dashboard pages of the meetings product: admins edit, approve and dispatch; members read; another org's admin
and an org without the product see nothing (404); every refused POST changes nothing."""

import json
import logging
from urllib.parse import urlencode

import pytest
from django.test import Client

from core import jsonparse
from meetings.models import Dispatch, DispatchProgress
from meetings.services import dispatch_report_progress, outcome_approve
from tests.factories import MembershipFactory, OrganizationFactory
from tests.support.clients import logged_in
from tests.support.meetings import approved_events, token_of
from tests.support.nested_json import HUGE, JUST_OVER


@pytest.fixture
def outsider(db):
    """An admin of another organization that has the product on."""
    return MembershipFactory(organization=OrganizationFactory(meetings_enabled=True), role="admin").user


def pages(meeting_id):
    return {
        "list": "/meetings/",
        "detail": f"/meetings/{meeting_id}",
        "dispatches": f"/meetings/{meeting_id}/dispatches",
        "edit": f"/meetings/{meeting_id}/edit",
    }


def actions(meeting_id):
    return {
        "edit": (f"/meetings/{meeting_id}/edit", {"title": "X", "summary": "Changed. By someone.", "tickets": "[]",
                                                  "decisions": "[]", "open_questions": "[]", "action_items": "[]"}),
        "approve": (f"/meetings/{meeting_id}/approve", {}),
        "dispatch": (f"/meetings/{meeting_id}/dispatch", {}),
    }


def _state(outcome):
    outcome.refresh_from_db()
    return outcome.summary, outcome.approved_at, Dispatch.objects.count(), len(approved_events(outcome.organization))


def test_the_admin_sees_the_list_and_the_outcome(draft, meetings_admin):
    client = logged_in(meetings_admin)
    listing = client.get("/meetings/")
    assert listing.status_code == 200
    assert b'data-testid="meeting-row"' in listing.content and b"Checkout reliability sync" in listing.content
    detail = client.get(f"/meetings/{draft.meeting_id}")
    assert detail.status_code == 200
    for marker in (b'data-testid="edit-outcome"', b'data-testid="approve-outcome"', b"Make the payment webhook"):
        assert marker in detail.content
    assert b'data-testid="dispatch-outcome"' not in detail.content  # not approved yet
    assert client.get(f"/meetings/{draft.meeting_id}/edit").status_code == 200


def test_the_admin_edits_approves_and_dispatches_and_sees_progress(draft, meetings_admin, subscription):
    client = logged_in(meetings_admin)
    meeting_id = draft.meeting_id
    form = {"title": "Renamed", "summary": "Edited in the dashboard. Two sentences.", "tickets": "[]",
            "decisions": json.dumps(draft.decisions), "open_questions": "[]", "action_items": "[]"}
    assert client.post(f"/meetings/{meeting_id}/edit", form).status_code == 302
    draft.refresh_from_db()
    assert draft.summary == "Edited in the dashboard. Two sentences." and draft.tickets == []
    assert draft.meeting.title == "Renamed"

    # Dispatch before approval: refused with a message, nothing sent.
    client.post(f"/meetings/{meeting_id}/dispatch")
    assert Dispatch.objects.count() == 0 and approved_events(draft.organization) == []

    assert client.post(f"/meetings/{meeting_id}/approve").status_code == 302
    draft.refresh_from_db()
    assert draft.approved_by == meetings_admin and approved_events(draft.organization) == []

    assert client.post(f"/meetings/{meeting_id}/dispatch").status_code == 302
    dispatch = Dispatch.objects.get()
    assert len(approved_events(draft.organization)) == 1

    page = client.get(f"/meetings/{meeting_id}")
    assert b'data-testid="dispatch-state">Sent' in page.content
    assert b"hx-trigger" in page.content  # polls while open
    assert b'data-testid="edit-outcome"' not in page.content  # dispatched: no more edits

    token = token_of(approved_events(draft.organization)[0].data["status_url"])
    dispatch_report_progress(dispatch_id=dispatch.pk, token=token, state="acked")
    dispatch_report_progress(dispatch_id=dispatch.pk, token=token, state="done", detail="Filed as PROJ-7")
    fragment = client.get(f"/meetings/{meeting_id}/dispatches")
    assert fragment.status_code == 200
    assert b'data-testid="dispatch-state">Done' in fragment.content and b"Filed as PROJ-7" in fragment.content
    assert b"hx-trigger" not in fragment.content  # final: stops polling


def test_an_invalid_edit_shows_the_errors_beside_the_field(draft, meetings_admin):
    client = logged_in(meetings_admin)
    form = {"title": "", "summary": "Just one sentence", "tickets": '[{"title": "x"}]', "decisions": "{nope",
            "open_questions": "[]", "action_items": "[]"}
    response = client.post(f"/meetings/{draft.meeting_id}/edit", form)
    assert response.status_code == 200
    assert b'data-testid="error-decisions"' in response.content  # JSON that does not parse
    form["decisions"] = "[]"
    response = client.post(f"/meetings/{draft.meeting_id}/edit", form)
    assert b'data-testid="error-summary"' in response.content and b'data-testid="error-tickets"' in response.content
    assert b"tickets.0.description" in response.content
    draft.refresh_from_db()
    assert draft.summary.startswith("We reviewed")


def test_a_member_reads_but_cannot_change_anything(approved, meetings_member):
    client = logged_in(meetings_member)
    assert client.get("/meetings/").status_code == 200
    page = client.get(f"/meetings/{approved.meeting_id}")
    assert page.status_code == 200 and b"Read only" in page.content
    for marker in (b"edit-outcome", b"approve-outcome", b"dispatch-outcome"):
        assert marker not in page.content
    assert client.get(f"/meetings/{approved.meeting_id}/dispatches").status_code == 200
    assert client.get(f"/meetings/{approved.meeting_id}/edit").status_code == 403
    before = _state(approved)
    for path, data in actions(approved.meeting_id).values():
        assert client.post(path, data).status_code == 403, path
    assert _state(approved) == before


def test_another_orgs_admin_gets_404_everywhere_and_changes_nothing(approved, outsider):
    client = logged_in(outsider)
    assert client.get("/meetings/").status_code == 200
    assert b"Checkout reliability sync" not in client.get("/meetings/").content
    for name, path in pages(approved.meeting_id).items():
        if name != "list":
            assert client.get(path).status_code == 404, path
    before = _state(approved)
    for path, data in actions(approved.meeting_id).values():
        assert client.post(path, data).status_code == 404, path
    assert _state(approved) == before


@pytest.mark.parametrize("role", ["admin", "member"])
def test_an_org_without_the_product_sees_none_of_it(approved, meetings_org, role):
    meetings_org.meetings_enabled = False
    meetings_org.save(update_fields=["meetings_enabled"])
    user = MembershipFactory(organization=meetings_org, role=role).user
    client = logged_in(user)
    for path in pages(approved.meeting_id).values():
        assert client.get(path).status_code == 404, path
    before = _state(approved)
    for path, data in actions(approved.meeting_id).values():
        assert client.post(path, data).status_code == 404, path
    assert _state(approved) == before


def test_anonymous_visitors_go_to_the_login_page(draft):
    response = Client().get(f"/meetings/{draft.meeting_id}")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_dispatch_is_offered_again_after_a_dispatch(dispatched, meetings_admin):
    dispatch, _ = dispatched
    page = logged_in(meetings_admin).get(f"/meetings/{dispatch.outcome.meeting_id}")
    assert b"Dispatch again" in page.content
    assert DispatchProgress.objects.count() == 0


def test_approve_via_service_then_member_sees_approved_status(draft, meetings_admin, meetings_member):
    outcome_approve(outcome=draft, by=meetings_admin)
    page = logged_in(meetings_member).get(f"/meetings/{draft.meeting_id}")
    assert b"Approved" in page.content and meetings_admin.email.encode() in page.content


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE"])
def test_every_unsafe_method_is_a_write_refused_to_members(approved, meetings_member, method):
    client = logged_in(meetings_member)
    before = _state(approved)
    for path, data in actions(approved.meeting_id).values():
        response = client.generic(method, path, urlencode(data), content_type="application/x-www-form-urlencoded")
        assert response.status_code == 403, (method, path)
    assert _state(approved) == before


@pytest.mark.parametrize("payload", [HUGE, JUST_OVER])
def test_the_outcome_editor_shows_deep_nesting_as_a_field_error(draft, meetings_admin, caplog, payload):
    form = {"title": "X", "summary": "Changed. By someone.", "tickets": "[]", "decisions": payload,
            "open_questions": "[]", "action_items": "[]"}
    response = logged_in(meetings_admin).post(f"/meetings/{draft.meeting_id}/edit", form)
    assert response.status_code == 200
    assert b'data-testid="error-decisions"' in response.content
    assert jsonparse.TOO_DEEP.encode() in response.content
    draft.refresh_from_db()
    assert draft.summary.startswith("We reviewed")
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
