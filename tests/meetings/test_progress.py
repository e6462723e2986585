"""Progress posted back to a dispatch's status_url: acked, then done or failed; repeats are 200; every other move
is 409 `invalid_transition`; a wrong or missing token is 404 with nothing changed."""

import json
import uuid
from itertools import product

import pytest
from django.test import Client

from meetings.models import Dispatch, DispatchProgress
from tests.support.meetings import status_path, token_of
from tests.support.nested_json import HUGE, JUST_OVER, assert_refused_as_too_deep

STATES = ["sent", "acked", "done", "failed"]
REPORTED = ["acked", "done", "failed"]
ALLOWED = {("sent", "acked"), ("acked", "done"), ("acked", "failed")}


def post(path, body, raw=False):
    return Client().post(path, data=body if raw else json.dumps(body), content_type="application/json")


def _put_in_state(dispatch, state):
    Dispatch.objects.filter(pk=dispatch.pk).update(state=state)


def _snapshot(dispatch):
    dispatch.refresh_from_db()
    return dispatch.state, dispatch.updated_at, DispatchProgress.objects.count()


@pytest.mark.parametrize(("current", "requested"), list(product(STATES, REPORTED)))
def test_every_transition_is_allowed_or_refused(dispatched, current, requested):
    dispatch, url = dispatched
    _put_in_state(dispatch, current)
    before = _snapshot(dispatch)
    response = post(status_path(url), {"state": requested, "detail": f"to {requested}"})
    if (current, requested) in ALLOWED:
        assert response.status_code == 200, response.content
        assert response.json()["data"]["state"] == requested
        assert response.json()["data"]["dispatch_id"] == str(dispatch.pk)
        dispatch.refresh_from_db()
        assert dispatch.state == requested
        step = DispatchProgress.objects.get(dispatch=dispatch)
        assert (step.from_state, step.state, step.detail) == (current, requested, f"to {requested}")
    elif current == requested:
        assert response.status_code == 200, response.content
        assert response.json()["data"]["state"] == current
        assert _snapshot(dispatch) == before  # a repeat changes nothing, records nothing
    else:
        assert response.status_code == 409, response.content
        assert response.json() == {"error": "invalid_transition"}
        assert _snapshot(dispatch) == before


def test_the_full_happy_path_records_the_history_in_order(dispatched):
    dispatch, url = dispatched
    assert post(status_path(url), {"state": "acked"}).status_code == 200
    assert post(status_path(url), {"state": "acked", "detail": "retry of the ack"}).status_code == 200
    assert post(status_path(url), {"state": "done", "detail": "Created PROJ-12 and PROJ-13"}).status_code == 200
    history = list(dispatch.progress.order_by("created_at").values_list("from_state", "state", "detail"))
    assert history == [("sent", "acked", ""), ("acked", "done", "Created PROJ-12 and PROJ-13")]
    assert post(status_path(url), {"state": "failed"}).status_code == 409


def test_sent_cannot_jump_to_done_or_failed(dispatched):
    dispatch, url = dispatched
    for state in ("done", "failed"):
        assert post(status_path(url), {"state": state}).json() == {"error": "invalid_transition"}
    dispatch.refresh_from_db()
    assert dispatch.state == "sent"


@pytest.mark.parametrize("variant", ["wrong", "missing", "empty", "other-dispatch", "unknown-dispatch", "digest"])
def test_a_wrong_or_missing_token_is_404_and_nothing_changes(dispatched, meetings_admin, variant):
    from meetings.services import outcome_dispatch
    from webhooks.models import Event

    dispatch, url = dispatched
    path = f"/hooks/meeting-dispatches/{dispatch.pk}/status"
    token = token_of(url)
    if variant == "wrong":
        path += "?token=" + token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    elif variant == "empty":
        path += "?token="
    elif variant == "other-dispatch":
        other = outcome_dispatch(outcome=dispatch.outcome, by=meetings_admin)
        path += "?token=" + token_of(Event.objects.get(pk=other.event_id).data["status_url"])
    elif variant == "unknown-dispatch":
        path = f"/hooks/meeting-dispatches/{uuid.uuid4()}/status?token={token}"
    elif variant == "digest":
        path += "?token=" + dispatch.token_digest
    before = _snapshot(dispatch)
    # Even an invalid body gets the 404: the token is checked first.
    for body in ({"state": "acked"}, {"state": "nonsense", "extra": 1}):
        response = post(path, body)
        assert response.status_code == 404
        assert response.json() == {"error": "not_found"}
    assert _snapshot(dispatch) == before


def test_a_malformed_dispatch_id_is_404(dispatched):
    response = post("/hooks/meeting-dispatches/not-a-uuid/status?token=x", {"state": "acked"})
    assert response.status_code == 404 and response.json() == {"error": "not_found"}


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({}, "state"),
        ({"state": "sent"}, "state"),
        ({"state": "DONE"}, "state"),
        ({"state": 1}, "state"),
        ({"state": "acked", "detail": "x" * 5001}, "detail"),
        ({"state": "acked", "detail": 5}, "detail"),
        ({"state": "acked", "extra": True}, "formErrors"),
        ([], "formErrors"),
    ],
)
def test_an_invalid_body_with_the_right_token_is_400_and_nothing_changes(dispatched, body, where):
    dispatch, url = dispatched
    before = _snapshot(dispatch)
    response = post(status_path(url), body)
    assert response.status_code == 400, response.content
    details = response.json()["details"]
    assert details["formErrors"] if where == "formErrors" else where in details["fieldErrors"]
    assert _snapshot(dispatch) == before


def test_a_body_that_is_not_json_is_400(dispatched):
    _, url = dispatched
    response = post(status_path(url), "{nope", raw=True)
    assert response.status_code == 400 and response.json()["error"] == "Validation failed"


def test_a_detail_of_exactly_5000_characters_is_kept(dispatched):
    dispatch, url = dispatched
    assert post(status_path(url), {"state": "acked", "detail": "d" * 5000}).status_code == 200
    assert dispatch.progress.get().detail == "d" * 5000


def test_no_api_key_is_needed_and_one_is_ignored(dispatched, api):
    _, url = dispatched
    response = api.post(status_path(url), {"state": "acked"}, format="json")
    assert response.status_code == 200


def test_only_post_is_allowed(dispatched):
    _, url = dispatched
    response = Client().get(status_path(url))
    assert response.status_code == 405 and response.json() == {"error": "method_not_allowed"}


@pytest.mark.parametrize("payload", [HUGE, JUST_OVER])
def test_the_status_hook_refuses_deep_nesting_with_400(dispatched, caplog, payload):
    _, url = dispatched
    response = Client().post(status_path(url), data=payload, content_type="application/json")
    assert_refused_as_too_deep(response, caplog)
    assert not DispatchProgress.objects.exists()
