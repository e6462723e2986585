"""The meetings runtime posts drafted outcomes through the internal API: service token, strict validation,
idempotent on the runtime's meeting id."""

import json
import time
import uuid

import pytest

from meetings.models import Meeting, Outcome
from meetings.validation import count_sentences
from tests.factories import OrganizationFactory
from tests.support.fielderrors import reported_at
from tests.support.meetings import ingest_body, post_meeting, valid_outcome
from tests.support.runtime import runtime_client


def with_ticket(**changes):
    return valid_outcome(tickets=[{**valid_outcome()["tickets"][0], **changes}])


def _nothing_written():
    return not Meeting.objects.exists() and not Outcome.objects.exists()


def test_a_valid_post_creates_the_meeting_and_its_drafted_outcome(meetings_org):
    response = post_meeting(runtime_client(), meetings_org, ingest_body())
    assert response.status_code == 201, response.content
    data = response.json()["data"]
    assert data["created"] is True and data["runtime_meeting_id"] == "rt-meeting-1"
    meeting = Meeting.objects.for_org(meetings_org).get(pk=data["meeting_id"])
    assert meeting.title == "Checkout reliability sync"
    assert str(meeting.outcome.pk) == data["outcome_id"]
    assert meeting.outcome.tickets[0]["confidence"] == 0.85
    assert meeting.outcome.approved_at is None


@pytest.mark.parametrize(
    "header",
    [
        None,
        "Bearer wrong-token",
        "bearer test-agent-runtime-token-0123456789abcdef",
        "Bearer  test-agent-runtime-token-0123456789abcdef",
        "Token test-agent-runtime-token-0123456789abcdef",
        "Bearer test-agent-runtime-token-0123456789abcde",
    ],
    ids=["missing", "wrong", "lowercase-scheme", "two-spaces", "other-scheme", "truncated"],
)
def test_without_the_service_token_it_is_401_and_nothing_is_written(meetings_org, header):
    client = runtime_client(token="")
    if header:
        client.credentials(HTTP_AUTHORIZATION=header)
    response = post_meeting(client, meetings_org, ingest_body())
    assert response.status_code == 401
    assert response.json() == {"error": "unauthorized"}
    assert response["WWW-Authenticate"] == "Bearer"
    assert _nothing_written()


def test_an_api_key_is_not_the_service_token(meetings_org, write_key):
    response = post_meeting(runtime_client(token=write_key[1]), meetings_org, ingest_body())
    assert response.status_code == 401
    assert _nothing_written()


def test_with_no_token_configured_nobody_gets_in(meetings_org, settings):
    settings.AGENT_RUNTIME_TOKEN = ""
    client = runtime_client(token="")
    client.credentials(HTTP_AUTHORIZATION="Bearer ")
    assert post_meeting(client, meetings_org, ingest_body()).status_code == 401
    assert _nothing_written()


def test_an_unknown_org_is_404(db):
    response = runtime_client().post(
        f"/internal/agent/v1/orgs/{uuid.uuid4()}/meetings", data=json.dumps(ingest_body()),
        content_type="application/json",
    )
    assert response.status_code == 404
    assert response.json() == {"error": "not_found"}


def test_the_same_runtime_meeting_id_twice_gives_the_same_meeting(meetings_org):
    client = runtime_client()
    first = post_meeting(client, meetings_org, ingest_body())
    again = post_meeting(client, meetings_org, ingest_body(title="A different title"))
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["data"]["created"] is False
    assert {k: v for k, v in first.json()["data"].items() if k != "created"} == {
        k: v for k, v in again.json()["data"].items() if k != "created"
    }
    assert Meeting.objects.count() == 1 and Outcome.objects.count() == 1
    assert Meeting.objects.get().title == "Checkout reliability sync"  # the first post wins


def test_runtime_meeting_ids_are_per_org(meetings_org):
    other = OrganizationFactory()
    client = runtime_client()
    assert post_meeting(client, meetings_org, ingest_body()).status_code == 201
    assert post_meeting(client, other, ingest_body()).status_code == 201
    assert Meeting.objects.count() == 2


def test_an_org_without_the_product_still_receives_drafts(org):
    """The runtime may send before an admin turns the product on; nothing is shown or sent until then."""
    assert post_meeting(runtime_client(), org, ingest_body()).status_code == 201


@pytest.mark.parametrize(
    ("outcome", "field"),
    [
        (valid_outcome(summary="Only one sentence here."), "outcome.summary"),
        (valid_outcome(summary="One. Two. Three. Four. Five. Six."), "outcome.summary"),
        (valid_outcome(summary=""), "outcome.summary"),
        (valid_outcome(summary=12), "outcome.summary"),
        (valid_outcome(summary="A. " + "b" * 5000 + "."), "outcome.summary"),
        (valid_outcome(tickets={}), "outcome.tickets"),
        (with_ticket(confidence=1.5), "outcome.tickets.0.confidence"),
        (with_ticket(confidence=True), "outcome.tickets.0.confidence"),
        (with_ticket(confidence="high"), "outcome.tickets.0.confidence"),
        (with_ticket(title="t" * 201), "outcome.tickets.0.title"),
        (with_ticket(file_refs=[{"repo": "r"}]),
         "outcome.tickets.0.file_refs.0.path"),
        (with_ticket(acceptance_criteria=[1]),
         "outcome.tickets.0.acceptance_criteria.0"),
        (valid_outcome(tickets=[{k: v for k, v in valid_outcome()["tickets"][0].items() if k != "provenance"}]),
         "outcome.tickets.0.provenance"),
        (valid_outcome(tickets=[valid_outcome()["tickets"][0]] * 51), "outcome.tickets"),
        (valid_outcome(decisions=[{"decision": "x"}]), "outcome.decisions.0.context"),
        (valid_outcome(open_questions=["why?"]), "outcome.open_questions.0"),
        (valid_outcome(action_items=[{"who": "A", "what": "B", "due": "next week"}]), "outcome.action_items.0.due"),
        (valid_outcome(action_items=[{"who": "A", "what": "B", "due": "2026-02-30"}]), "outcome.action_items.0.due"),
        (valid_outcome(action_items=[{"who": "A", "what": "B"}]), "outcome.action_items.0.due"),
        (valid_outcome(schema_version=2), "outcome.schema_version"),
        (valid_outcome(schema_version="1"), "outcome.schema_version"),
        ({k: v for k, v in valid_outcome().items() if k != "decisions"}, "outcome.decisions"),
        ("not an object", "outcome"),
    ],
)
def test_an_invalid_outcome_is_400_with_the_field_and_nothing_is_written(meetings_org, outcome, field):
    response = post_meeting(runtime_client(), meetings_org, ingest_body(outcome=outcome))
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"] == "Validation failed"
    assert list(body["details"]["fieldErrors"]) == ["outcome"], body
    assert reported_at(body["details"], field), body
    assert _nothing_written()


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (ingest_body(extra=1), "formErrors"),
        (ingest_body(outcome=valid_outcome(sentiment="happy")), "formErrors"),
        (ingest_body(started_at="yesterday"), "started_at"),
        (ingest_body(started_at="2026-11-20T15:00:00"), "started_at"),
        (ingest_body(ended_at="2026-11-20T14:00:00Z"), "ended_at"),
        (ingest_body(title="t" * 201), "title"),
        (ingest_body(runtime_meeting_id=""), "runtime_meeting_id"),
        ({"title": None}, "runtime_meeting_id"),
        ([1, 2], "formErrors"),
    ],
)
def test_an_invalid_envelope_is_400_and_nothing_is_written(meetings_org, body, where):
    response = post_meeting(runtime_client(), meetings_org, body)
    assert response.status_code == 400, response.content
    details = response.json()["details"]
    assert details["formErrors"] if where == "formErrors" else where in details["fieldErrors"], details
    assert _nothing_written()


def test_a_body_that_is_not_json_is_400(meetings_org):
    response = runtime_client().post(
        f"/internal/agent/v1/orgs/{meetings_org.pk}/meetings", data="{nope", content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"] == "Validation failed"


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("One. Two.", 2),
        ("One sentence, e.g. with an abbreviation. And a second one!", 2),
        ("Version 2.5 shipped. Did it work? Yes", 3),
        ("No terminal punctuation", 1),
        ("  ", 0),
        ('He said "stop." Then left.', 2),
    ],
)
def test_sentences_are_counted_by_their_endings(text, count):
    assert count_sentences(text) == count


def test_counting_sentences_is_linear():
    # A run of periods before a non-space was tried from each of its characters: 20,000 of them took 10 s.
    started = time.perf_counter()
    assert count_sentences("." * 20_000 + "x") == 1
    assert count_sentences("Wait" + "!" * 20_000 + "? Yes.") == 2
    assert time.perf_counter() - started < 1
