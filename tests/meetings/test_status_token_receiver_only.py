"""A dispatch's status token is for its receiver alone (issue 26, item 5): it can move the dispatch to done or
failed, so the event log shows it redacted to read-only keys (`GET /v1/events`, one event) and to every member (the
Events page), while the body delivered to the receiver carries it and it works."""

import json

import pytest
from django.test import Client

from meetings.models import Dispatch
from meetings.services import outcome_dispatch
from tests.factories import make_key
from tests.support.clients import logged_in
from tests.support.meetings import status_path, token_of
from tests.support.receiver import Receiver
from tests.support.webhooks import attempt_delivery, make_subscription
from webhooks.catalog import REDACTED
from webhooks.models import Delivery


@pytest.fixture
def delivered(approved, meetings_admin, meetings_org, settings):
    """(dispatch, the status_url the receiver was sent): one real delivery to an HTTP receiver on loopback."""
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
    with Receiver(status=204) as receiver:
        make_subscription(meetings_org, url=receiver.url, events=("meeting.outcome_approved",))
        dispatch = outcome_dispatch(outcome=approved, by=meetings_admin)
        assert attempt_delivery(Delivery.objects.get(event_id=dispatch.event_id).pk) == "succeeded"
        (call,) = receiver.wait_for(1)
    return dispatch, json.loads(call["body"])["data"]["status_url"]


def _progress(status_url, state):
    return Client().post(status_path(status_url), json.dumps({"state": state}), content_type="application/json")


def test_a_read_key_sees_the_event_without_a_usable_token(delivered, meetings_org, meetings_admin):
    dispatch, sent_url = delivered
    token = token_of(sent_url)
    _, read_key = make_key(meetings_org, scope="read", admin=meetings_admin, name="Read key")
    reader = Client(HTTP_AUTHORIZATION=f"Bearer {read_key}")
    listed = reader.get("/v1/events", {"type": "meeting.outcome_approved"})
    one = reader.get(f"/v1/events/{dispatch.event_id}")
    assert listed.status_code == 200 and one.status_code == 200
    for response in (listed, one):
        assert token not in response.content.decode()
    shown = listed.json()["data"][0]["data"]["status_url"]
    assert shown == one.json()["data"]["data"]["status_url"] == sent_url.replace(token, REDACTED)
    assert _progress(shown, "acked").status_code == 404  # what the log shows moves nothing
    assert Dispatch.objects.get(pk=dispatch.pk).state == "sent"


def test_the_events_page_never_shows_the_token(delivered, meetings_member, meetings_admin):
    _, sent_url = delivered
    token = token_of(sent_url)
    for user in (meetings_member, meetings_admin):
        page = logged_in(user).get("/events/")
        assert page.status_code == 200
        body = page.content.decode()
        assert "meeting.outcome_approved" in body and token not in body
        assert f"token={REDACTED}" in body


def test_the_receivers_token_still_moves_the_dispatch(delivered):
    dispatch, sent_url = delivered
    assert _progress(sent_url, "acked").status_code == 200
    assert _progress(sent_url, "done").status_code == 200
    assert Dispatch.objects.get(pk=dispatch.pk).state == "done"
