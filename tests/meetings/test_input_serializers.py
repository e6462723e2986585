"""The ingestion and progress endpoints validate through serializers: an impossible timestamp is a 400 on its
field, never a 500; the existing error shapes stay (formErrors for the body, fieldErrors by name)."""

import pytest

from meetings.models import Meeting, Outcome
from tests.support.meetings import ingest_body, post_meeting
from tests.support.runtime import runtime_client


def _nothing_written():
    return not Meeting.objects.exists() and not Outcome.objects.exists()


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"started_at": "2026-02-30T00:00:00Z"}, "started_at"),
        ({"started_at": "2026-13-01T00:00:00Z"}, "started_at"),
        ({"started_at": "2026-11-20T25:00:00Z"}, "started_at"),
        ({"ended_at": "2026-02-30T00:00:00Z"}, "ended_at"),
        ({"started_at": None}, "started_at"),
        ({"started_at": 1763650800}, "started_at"),
        ({"title": 5}, "title"),
        ({"runtime_meeting_id": 5}, "runtime_meeting_id"),
        ({"runtime_meeting_id": "m" * 201}, "runtime_meeting_id"),
    ],
)
def test_an_impossible_or_mistyped_envelope_field_is_400_on_that_field(meetings_org, changes, field):
    response = post_meeting(runtime_client(), meetings_org, ingest_body(**changes))
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == "Validation failed"
    assert list(body["details"]["fieldErrors"]) == [field], body
    assert body["details"]["formErrors"] == []
    assert _nothing_written()


def test_an_unknown_org_in_the_path_is_404_after_the_token(db):
    response = post_meeting(runtime_client(), type("Org", (), {"pk": "00000000-0000-0000-0000-000000000000"}),
                            ingest_body())
    assert response.status_code == 404 and response.json() == {"error": "not_found"}


def test_a_valid_post_with_an_offset_keeps_the_instant(meetings_org):
    response = post_meeting(runtime_client(), meetings_org, ingest_body(started_at="2026-11-20T10:00:00-05:00",
                                                                          ended_at=None))
    assert response.status_code == 201, response.content
    meeting = Meeting.objects.get()
    assert meeting.started_at.isoformat() == "2026-11-20T15:00:00+00:00"
    assert meeting.ended_at is None
