"""Retention: GET/PATCH /v1/privacy/retention (defaults, bad input, audit, scope) and the purge at both levels with a
clock the test sets: exactly what is due goes, recordings leave storage, a second run deletes nothing, analytics stay
as they were, another organization is never touched."""

import hashlib
import io
import json
import os
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from audit.models import AuditEvent
from calls.models import Call, CallFieldRollup, CallRollup, Recording
from knowledge.services import location_create
from privacy.models import RetentionPolicy
from privacy.selectors import retention_preview
from privacy.services import retention_purge, retention_purge_all, retention_update
from tests.factories import make_key
from tests.support.clients import key_client
from tests.support.runtime import T0, place_call
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def test_a_new_organization_starts_at_90_and_365_days(read_api):
    response = read_api.get("/v1/privacy/retention")
    assert (response.status_code, response.json()) == (200, {"data": {
        "recordings_days": 90, "transcripts_days": 365, "locations": []}})


def test_an_existing_organization_keeps_everything_until_an_admin_chooses(org, read_api):
    # What privacy 0002 wrote for the organizations that existed before retention.
    RetentionPolicy.objects.create(organization=org, recordings_days=None, transcripts_days=None)
    assert read_api.get("/v1/privacy/retention").json()["data"] == {
        "recordings_days": None, "transcripts_days": None, "locations": []}
    assert retention_preview(org=org) == {"transcripts": 0, "recordings": 0}


def test_patch_sets_both_levels_and_is_audited(api, org, locations):
    body = {"recordings_days": 30, "transcripts_days": None,
            "locations": [{"location_id": str(locations[0].pk), "recordings_days": 7, "transcripts_days": 3650}]}
    response = api.patch("/v1/privacy/retention", body, format="json")
    expected = {"recordings_days": 30, "transcripts_days": None, "locations": [
        {"location_id": str(locations[0].pk), "recordings_days": 7, "transcripts_days": 3650}]}
    assert (response.status_code, response.json()) == (200, {"data": expected})
    assert api.get("/v1/privacy/retention").json() == {"data": expected}
    entry = AuditEvent.objects.get(action="retention.updated")
    assert entry.changes["recordings_days"] == [90, 30]
    assert entry.changes["transcripts_days"] == [365, None]
    # Only what changed: the same body again writes no entry.
    api.patch("/v1/privacy/retention", body, format="json")
    assert AuditEvent.objects.filter(action="retention.updated").count() == 1
    # `locations` replaces them all.
    assert api.patch("/v1/privacy/retention", {"locations": []}, format="json").json()["data"]["locations"] == []


@pytest.mark.parametrize(("body", "field"), [
    ({"recordings_days": 0}, "recordings_days"),
    ({"transcripts_days": 3651}, "transcripts_days"),
    ({"recordings_days": -5}, "recordings_days"),
    ({"recordings_days": "30"}, "recordings_days"),
    ({"transcripts_days": True}, "transcripts_days"),
    ({"locations": [{"location_id": "00000000-0000-4000-8000-000000000000", "recordings_days": 5,
                     "transcripts_days": 5}]}, "locations"),
    ({"locations": [{"location_id": "nope", "recordings_days": 5, "transcripts_days": 5}]},
     "locations"),
])
def test_bad_input_is_400_with_field_errors_and_changes_nothing(api, org, body, field):
    response = api.patch("/v1/privacy/retention", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"] == "Validation failed"
    assert field in response.json()["details"]["fieldErrors"]
    assert not RetentionPolicy.objects.filter(organization=org).exists()
    assert not AuditEvent.objects.filter(action="retention.updated").exists()


def test_another_organizations_location_is_refused(api, other_org, org):
    theirs = location_create(org=other_org, name="Theirs", address="x", timezone="UTC", phone_number="+12125550109")
    response = api.patch("/v1/privacy/retention", {"locations": [
        {"location_id": str(theirs.pk), "recordings_days": 1, "transcripts_days": 1}]}, format="json")
    assert response.status_code == 400
    assert response.json()["details"]["fieldErrors"] == {
        "locations": ["Item 0: location_id: Not a location of this organization."]}


def test_read_keys_cannot_patch_and_location_keys_get_403(org, admin, read_api, locations):
    response = read_api.patch("/v1/privacy/retention", {"recordings_days": 5}, format="json")
    assert (response.status_code, response.json()) == (403, {"error": "insufficient_scope", "required": "write"})
    limited = key_client(make_key(org, scope="read_write", admin=admin, location_ids=[locations[0].pk])[1])
    for method in ("get", "patch"):
        response = getattr(limited, method)("/v1/privacy/retention", {"recordings_days": 5}, format="json")
        assert response.status_code == 403 and response.json()["error"] == "forbidden"
    assert not RetentionPolicy.objects.filter(organization=org).exists()


def rollups(org) -> list:
    rows = CallRollup.objects.filter(organization=org).order_by("day", "location_id", "outcome").values()
    fields = CallFieldRollup.objects.filter(organization=org).order_by("day", "location_id", "name").values()
    return [{k: v for k, v in row.items() if k != "id"} for row in [*rows, *fields]]


def test_the_purge_deletes_exactly_what_is_due_at_both_levels(org, other_org, runtime, other_runtime, party_size,
                                                               locations, api):
    north, south = locations
    retention_update(org=org, recordings_days=10, transcripts_days=30, locations=[
        {"location_id": str(north.pk), "recordings_days": None, "transcripts_days": 5}])
    retention_update(org=other_org, recordings_days=1, transcripts_days=1)
    now = T0 + timedelta(days=20)
    calls = {
        "old": place_call(runtime, started_at=T0 - timedelta(days=20)),  # 40 days: both parts
        "plain": place_call(runtime, started_at=T0),  # 20 days: the recording only
        "north": place_call(runtime, started_at=T0, location=north),  # its location: transcript, recording kept
        "south": place_call(runtime, started_at=T0, location=south),  # the organization's days: the recording
        "young": place_call(runtime, started_at=T0 + timedelta(days=15)),  # 5 days: nothing
    }
    theirs = place_call(other_runtime, started_at=T0 - timedelta(days=300))
    files = {name: call.recording.file.path for name, call in calls.items()}
    analytics = rollups(org)
    analytics_api = api.get("/v1/analytics/calls", {"since": "2026-01-01T00:00:00Z"}).json()
    assert retention_preview(org=org, now=now) == {"transcripts": 2, "recordings": 3}

    result = retention_purge(org=org, now=now)

    assert (result["transcripts"], result["recordings"]) == (2, 3)
    state = {name: (Call.objects.get(pk=call.pk).content_deleted_reason, Recording.objects.filter(call=call).exists(),
                    os.path.exists(files[name])) for name, call in calls.items()}
    assert state == {
        "old": ("retention", False, False),
        "plain": (None, False, False),
        "north": ("retention", True, True),
        "south": (None, False, False),
        "young": (None, True, True),
    }
    assert Call.objects.get(pk=calls["north"].pk).transcript == []
    assert Call.objects.get(pk=calls["plain"].pk).summary
    # Analytics: every figure as it was, to the last bit of the field sums.
    assert rollups(org) == analytics
    assert api.get("/v1/analytics/calls", {"since": "2026-01-01T00:00:00Z"}).json() == analytics_api
    # One entry for the run: counts and a digest of the calls it touched.
    touched = sorted(str(calls[name].pk) for name in ("old", "plain", "north", "south"))
    entry = AuditEvent.objects.get(action="retention.purged")
    assert entry.changes == {"transcripts": [None, 2], "recordings": [None, 3],
                             "calls_sha256": [None, hashlib.sha256("\n".join(touched).encode()).hexdigest()]}
    reasons = sorted((e.data["call_id"], tuple(e.data["parts"])) for e in Event.objects.filter(
        organization=org, type="call.content_deleted"))
    assert reasons == sorted([(str(calls["old"].pk), ("transcript", "recording")),
                              (str(calls["plain"].pk), ("recording",)), (str(calls["north"].pk), ("transcript",)),
                              (str(calls["south"].pk), ("recording",))])
    # Another organization: untouched by this one's purge.
    assert Call.objects.get(pk=theirs.pk).content_deleted_at is None
    assert Recording.objects.filter(call=theirs).exists()

    # Twice: nothing more.
    snapshot = list(Call.objects.filter(organization=org).order_by("pk").values())
    events = Event.objects.count()
    assert retention_purge(org=org, now=now) == {"transcripts": 0, "recordings": 0,
                                                 "calls_sha256": hashlib.sha256(b"").hexdigest()}
    assert list(Call.objects.filter(organization=org).order_by("pk").values()) == snapshot
    assert Event.objects.count() == events
    assert AuditEvent.objects.filter(action="retention.purged").count() == 1


def test_every_organization_gets_its_own_policy(org, other_org, runtime, other_runtime, party_size):
    retention_update(org=org, recordings_days=None, transcripts_days=None)
    mine = place_call(runtime, started_at=T0 - timedelta(days=400))
    theirs = place_call(other_runtime, started_at=T0 - timedelta(days=400))  # a new org: 90 and 365 days
    retention_purge_all(now=T0)
    assert Call.objects.get(pk=mine.pk).content_deleted_at is None
    assert Recording.objects.filter(call=mine).exists()
    assert Call.objects.get(pk=theirs.pk).content_deleted_reason == "retention"
    assert not Recording.objects.filter(call=theirs).exists()


def test_the_management_command_runs_the_purge_at_once(org, other_org, runtime, other_runtime, party_size):
    retention_update(org=org, recordings_days=1, transcripts_days=1)
    call = place_call(runtime, started_at=timezone.now() - timedelta(days=3))
    theirs = place_call(other_runtime, started_at=timezone.now() - timedelta(days=3000))
    out = io.StringIO()
    call_command("purge_expired_content", "--org", str(org.pk), stdout=out)
    line = json.loads(out.getvalue().strip().splitlines()[-1])
    assert (line["organization_id"], line["transcripts"], line["recordings"]) == (str(org.pk), 1, 1)
    assert Call.objects.get(pk=call.pk).content_deleted_reason == "retention"
    assert Call.objects.get(pk=theirs.pk).content_deleted_at is None


def test_the_purge_pages_by_start_time_and_rests_after_each_batch(org, runtime, monkeypatch):
    """Pages of (started_at, id): calls that started at the same instant across a page's edge are each deleted once,
    none skipped; after each page the purge rests `pause` times as long as the page took."""
    retention_update(org=org, recordings_days=None, transcripts_days=1)
    calls = [place_call(runtime, started_at=T0, recording=False) for _ in range(5)]
    Call.objects.filter(pk__in=[call.pk for call in calls]).update(started_at=T0)  # the same instant, to the µs
    rests = []
    monkeypatch.setattr("privacy.services.time.sleep", rests.append)

    result = retention_purge(org=org, now=T0 + timedelta(days=2), batch_size=2, pause=0.5)

    assert result["transcripts"] == 5
    assert Call.objects.filter(organization=org, content_deleted_reason="retention").count() == 5
    assert Event.objects.filter(organization=org, type="call.content_deleted").count() == 5
    assert len(rests) == 3 and all(rest > 0 for rest in rests)  # pages of 2, 2 and 1
    rests.clear()
    assert retention_purge(org=org, now=T0 + timedelta(days=2), batch_size=2, pause=0)["transcripts"] == 0
    assert rests == []
