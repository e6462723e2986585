"""Concurrency: the row lock serializes progress posts, and the unique constraint makes concurrent ingestion of
one runtime meeting id a single meeting. Real threads with their own database connections."""

import json

import pytest
from django.test import Client

from meetings.models import Dispatch, DispatchProgress, Meeting
from tests.support.meetings import ingest_body, status_path
from tests.support.races import run_together


def run_concurrently(calls):
    return run_together(*calls)


@pytest.mark.django_db(transaction=True)
def test_done_and_failed_posted_at_once_only_one_wins(dispatched):
    dispatch, url = dispatched
    Dispatch.objects.filter(pk=dispatch.pk).update(state="acked")

    def post(state):
        return lambda: Client().post(status_path(url), data=json.dumps({"state": state}),
                                     content_type="application/json").status_code

    codes = run_concurrently([post("done"), post("failed")])
    assert sorted(codes) == [200, 409]
    dispatch.refresh_from_db()
    assert dispatch.state in ("done", "failed")
    assert list(DispatchProgress.objects.values_list("state", flat=True)) == [dispatch.state]


@pytest.mark.django_db(transaction=True)
def test_the_same_meeting_posted_twice_at_once_is_one_meeting(meetings_org, settings):
    token = settings.AGENT_RUNTIME_TOKEN

    def post():
        return Client().post(
            f"/internal/agent/v1/orgs/{meetings_org.pk}/meetings", data=json.dumps(ingest_body("rt-race")),
            content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}",
        ).status_code

    codes = run_concurrently([post, post, post])
    assert sorted(codes) == [200, 200, 201]
    assert Meeting.objects.filter(runtime_meeting_id="rt-race").count() == 1
