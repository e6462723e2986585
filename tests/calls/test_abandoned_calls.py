"""Calls that never end (issue 14, item 5): a call started but not completed within CALL_COMPLETION_TIMEOUT_MINUTES
is closed by a periodic sweep as `status: "abandoned"` (listed, filterable, shown in the dashboard; no event), and
a completion that arrives later still completes it and emits `call.ended` once."""

from datetime import timedelta

from django.conf import settings
from django.urls import reverse

from calls.models import Call
from calls.services.lifecycle import calls_abandon_stale
from calls.tasks import abandon_stale_calls
from tests.support.runtime import T0, Runtime, completion, iso
from webhooks.models import Event

TIMEOUT = timedelta(minutes=120)


def test_the_sweep_abandons_stale_calls_only_and_emits_nothing(org):
    runtime = Runtime(org)
    stale, _ = runtime.start(started_at=T0)
    fresh, _ = runtime.start(started_at=T0 + timedelta(minutes=100))
    done, _ = runtime.start(started_at=T0)
    runtime.complete(done)
    events = Event.objects.count()

    assert calls_abandon_stale(now=T0 + TIMEOUT + timedelta(seconds=1)) == 1
    assert runtime.call(stale).status == Call.Status.ABANDONED
    assert runtime.call(fresh).status == Call.Status.IN_PROGRESS
    assert runtime.call(done).status == Call.Status.COMPLETED
    assert Event.objects.count() == events
    assert calls_abandon_stale(now=T0 + TIMEOUT + timedelta(seconds=1)) == 0  # once


def test_the_timeout_is_a_setting(org, settings):
    settings.CALL_COMPLETION_TIMEOUT_MINUTES = 5
    runtime = Runtime(org)
    call_id, _ = runtime.start(started_at=T0)
    assert calls_abandon_stale(now=T0 + timedelta(minutes=4)) == 0
    assert calls_abandon_stale(now=T0 + timedelta(minutes=6)) == 1


def test_beat_runs_the_sweep_every_minute(org):
    entry = settings.CELERY_BEAT_SCHEDULE["calls-abandon-stale"]
    assert (entry["task"], entry["schedule"], entry["options"]["expires"]) == ("calls.abandon_stale_calls", 60, 60)
    runtime = Runtime(org)
    call_id, _ = runtime.start(started_at=T0)  # long ago: the task's own clock is now
    assert abandon_stale_calls.apply().get() == 1
    assert runtime.call(call_id).status == Call.Status.ABANDONED


def test_abandoned_calls_are_listed_and_filterable(org, api):
    runtime = Runtime(org)
    stale, _ = runtime.start(started_at=T0)
    other, _ = runtime.start(started_at=T0 + timedelta(minutes=119))
    calls_abandon_stale(now=T0 + TIMEOUT + timedelta(minutes=1))
    listed = api.get("/v1/calls", {"status": "abandoned"}).json()["data"]
    assert [item["id"] for item in listed] == [str(runtime.call(stale).pk)]
    assert listed[0]["status"] == "abandoned"
    assert api.get(f"/v1/calls/{runtime.call(stale).pk}").json()["data"]["status"] == "abandoned"
    assert [i["id"] for i in api.get("/v1/calls", {"status": "in_progress"}).json()["data"]] == [
        str(runtime.call(other).pk)]


def test_a_late_completion_still_completes_it_and_emits_call_ended_once(org):
    runtime = Runtime(org)
    call_id, _ = runtime.start(started_at=T0)
    calls_abandon_stale(now=T0 + TIMEOUT + timedelta(minutes=1))
    call = runtime.call(call_id)
    assert call.status == Call.Status.ABANDONED

    response = runtime.complete(call_id, ended_at=iso(T0 + TIMEOUT + timedelta(minutes=5)))
    assert response.status_code == 200, response.content
    assert runtime.call(call_id).status == Call.Status.COMPLETED
    assert Event.objects.filter(type="call.ended", call_id=call.pk).count() == 1
    assert runtime.complete(call_id).status_code == 200  # a retry of the completion
    assert Event.objects.filter(type="call.ended", call_id=call.pk).count() == 1
    assert completion()["classification"] == "real_engagement"  # the completion above was scorable


def test_the_dashboard_shows_an_abandoned_call_as_such(org, admin_client):
    runtime = Runtime(org)
    call_id, _ = runtime.start(started_at=T0)
    calls_abandon_stale(now=T0 + TIMEOUT + timedelta(minutes=1))
    call = runtime.call(call_id)
    listing = admin_client.get(reverse("dashboard:calls")).content.decode()
    assert 'data-testid="abandoned"' in listing
    detail = admin_client.get(reverse("dashboard:call", args=[call.pk])).content.decode()
    assert 'data-testid="call-abandoned"' in detail
