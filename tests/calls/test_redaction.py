"""Sensitive data redacted at ingest (docs/privacy.md#redaction): each kind in each form (the corpus generator's
slice, bench/redaction_corpus.py) in every place text is taken in, and afterwards the value nowhere: no text column,
event body, log line, idempotency answer or export holds it."""

import json
import logging
import random
import re
import uuid

import pytest
from django.core.management import call_command
from django.db import connection
from faker import Faker

from api.idempotency import _opened
from api.models import IdempotencyKey
from bench.redaction_corpus import ORG_NUMBER, every_form, sample
from calls.models import Call, Message, Recording
from core.sensitive import DETECTOR_VERSION, KINDS
from knowledge.services import call_field_create, escalation_rule_create, location_create
from orgs.redaction import redaction_policy_update
from tests.support.events import event_types, events
from tests.support.meetings import post_meeting, valid_outcome
from tests.support.runtime import T0, TRANSCRIPT, Runtime, completion, order_body, runtime_client
from webhooks.models import Event
from webhooks.services import emit

FORMS = every_form()


def _id(secret) -> str:
    return f"{secret.kind}-{secret.form}"


def _text_sources() -> list[tuple[str, list[str]]]:
    """Every table of the project with its text, JSON and byte columns, as SQL expressions of their text."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND data_type IN "
            "('text', 'character varying', 'json', 'jsonb', 'bytea', 'ARRAY') ORDER BY table_name, column_name"
        )
        rows = cursor.fetchall()
    tables: dict[str, list[str]] = {}
    for table, column, kind in rows:
        quoted = connection.ops.quote_name(column)
        tables.setdefault(table, []).append(
            f"encode({quoted}, 'escape')" if kind == "bytea" else f"{quoted}::text")
    return sorted(tables.items())


def _pattern(part: str) -> str:
    """`part` as a whole (not inside a longer number or word: a 3-digit code is in many a timestamp's milliseconds),
    case aside; the same regular expression in Python and PostgreSQL."""
    return r"(^|[^0-9A-Za-z])" + re.escape(part) + r"([^0-9A-Za-z]|$)"


def stored_anywhere(parts: list[str]) -> list[str]:
    """The tables whose text holds any of `parts`: every text, JSON and byte column of every table, event bodies
    included (stored answers of idempotent requests are encrypted: see _idempotency_answers)."""
    found = []
    with connection.cursor() as cursor:
        for table, expressions in _text_sources():
            text = "concat_ws(' ', " + ", ".join(expressions) + ")"
            where = " OR ".join(f"{text} ~* %s" for _ in parts)
            cursor.execute(f"SELECT 1 FROM {connection.ops.quote_name(table)} WHERE {where} LIMIT 1",  # noqa: S608
                           [_pattern(part) for part in parts])
            if cursor.fetchone():
                found.append(table)
    return found


def _idempotency_answers() -> str:
    return json.dumps([_opened(bytes(row.body)) for row in IdempotencyKey.objects.all()])


def _holds(text: str, parts: list[str]) -> list[str]:
    return [part for part in parts if re.search(_pattern(part), text, re.IGNORECASE)]


@pytest.fixture
def redacting_org(org):
    """An organization that redacts every kind; its published number is its location's."""
    redaction_policy_update(org=org, kinds=list(KINDS))
    location_create(org=org, name="Main", address="1 Main St", timezone="America/New_York", phone_number=ORG_NUMBER)
    org.refresh_from_db()
    return org


def _place_everywhere(org, runtime: Runtime, secret) -> Call:
    """The secret in every place the calls domain takes text in: callback reason, escalation context (mid-call),
    transcript, summary, quality-check evidence, a message, a call field's value and evidence, an unanswered
    question, order answers (completion)."""
    rule = escalation_rule_create(org=org, name=f"Rule {uuid.uuid4().hex[:6]}", destination_type="phone",
                                  destination_phone="+14155550199", keywords=["manager"])
    call_id, _ = runtime.start()
    assert runtime.event(call_id, type="callback_requested", label="cb",
                         data={"reason": secret.sentence}).status_code == 201
    assert runtime.event(call_id, type="escalation_triggered", label="esc", data={
        "rule_id": str(rule.pk), "triggered_by": "keyword", "context": secret.sentence}).status_code == 201
    turns = TRANSCRIPT + [{"speaker": speaker, "text": text, "offset_seconds": 20.0 + i}
                          for i, (speaker, text) in enumerate(secret.turns)]
    quotes = [text for speaker, text in secret.turns if speaker == "caller"]
    answer = {"question_id": "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e60", "prompt": "Anything else?",
              "answer": secret.sentence}
    order = order_body(order_answers=[answer])
    order["items"][1]["answers"] = [{**answer, "question_id": "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f"}]
    response = runtime.complete(
        call_id, transcript=turns, summary=secret.sentence, order=order,
        quality_checks=[{"name": "Took the details", "verdict": "pass", "evidence": quotes}],
        messages=[{"message": secret.sentence}], unanswered_questions=[secret.sentence],
        fields={"notes": {"value": secret.sentence, "evidence": quotes[-1]}},
    )
    assert response.status_code == 200, response.json()
    return runtime.call(call_id)


@pytest.mark.parametrize("secret", FORMS, ids=_id)
def test_each_kind_in_each_form_is_redacted_everywhere_and_stored_nowhere(redacting_org, api, secret, caplog,
                                                                          settings):
    org = redacting_org
    call_field_create(org=org, name="notes", label="Notes", type="string")
    caplog.set_level(logging.DEBUG)
    call = _place_everywhere(org, Runtime(org), secret)
    meeting = post_meeting(runtime_client(), org, {
        "runtime_meeting_id": f"m-{uuid.uuid4().hex}", "title": "Weekly", "started_at": "2026-11-20T15:00:00Z",
        "outcome": valid_outcome(summary=f"We met about a caller. {secret.sentence}",
                                 decisions=[{"decision": secret.sentence, "context": secret.sentence}],
                                 action_items=[{"who": "Sam", "what": secret.sentence, "due": None}]),
    })
    assert meeting.status_code == 201, meeting.json()
    message = Message.objects.get(call=call)
    answered = api.patch(f"/v1/messages/{message.pk}", {"handled": True}, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert answered.status_code == 200

    placeholder = f"[{secret.kind}]"
    detail = api.get(f"/v1/calls/{call.pk}").json()["data"]
    said = " ".join(turn["text"] for turn in detail["transcript"])
    assert placeholder in said and placeholder in detail["summary"]
    assert detail["redaction"]["detector_version"] == DETECTOR_VERSION
    assert detail["redaction"]["counts"][secret.kind] >= 1
    [check] = detail["quality_checks"]
    assert check["verification"] == "verified", check  # the quotes were redacted as the turns they quote
    assert detail["fields"]["notes"]["evidence_verified"] is True
    assert placeholder in json.dumps(answered.json())  # the stored answer is the redacted one

    assert stored_anywhere(secret.parts) == []
    assert _holds(_idempotency_answers(), secret.parts) == []
    assert _holds("\n".join(record.getMessage() for record in caplog.records), secret.parts) == []
    for kind in ("calls", "messages", "callbacks", "escalations", "orders"):
        response = api.get(f"/v1/exports/{kind}.csv")
        assert response.status_code == 200
        assert _holds(b"".join(response.streaming_content).decode(), secret.parts) == [], kind


def test_distractors_stay_intact_and_count_nothing(redacting_org, runtime, api):
    made = sample(random.Random(5), Faker(), secrets=[], distractors=[
        "order_number", "order_number_spoken", "confirmation", "price", "price_spoken", "time", "quantity",
        "booking_date", "org_number", "zip_code"])
    turns = [{"speaker": speaker, "text": text, "offset_seconds": float(i)} for i, (speaker, text) in
             enumerate(made.turns)]
    call_id, _ = runtime.start()
    assert runtime.complete(call_id, transcript=turns, outcome="info").status_code == 200
    detail = api.get(f"/v1/calls/{runtime.call(call_id).pk}").json()["data"]
    assert [turn["text"] for turn in detail["transcript"]] == [text for _, text in made.turns]
    assert detail["redaction"]["counts"] == {}


def test_a_quote_that_cuts_into_a_card_still_verifies_and_holds_no_digit_of_it(org, runtime, api):
    call_id, _ = runtime.start()
    turns = [{"speaker": "caller", "text": "Sure, my card is 4111 1111 1111 1111, thanks", "offset_seconds": 1.0}]
    checks = [{"name": "Card", "verdict": "pass", "evidence": ["my card is 4111 1111"]},
              {"name": "Whole", "verdict": "pass", "evidence": ["Sure, MY card is   4111 1111 1111 1111, thanks"]}]
    assert runtime.complete(call_id, transcript=turns, outcome="info", quality_checks=checks).status_code == 200
    detail = api.get(f"/v1/calls/{runtime.call(call_id).pk}").json()["data"]
    assert detail["transcript"][0]["text"] == "Sure, my card is [card_number], thanks"
    assert [check["evidence"] for check in detail["quality_checks"]] == [
        ["my card is [card_number]"], ["Sure, my card is [card_number], thanks"]]
    assert [check["verification"] for check in detail["quality_checks"]] == ["verified", "verified"]


def test_a_card_split_over_the_callers_turns_is_redacted_in_both(org, runtime, api):
    call_id, _ = runtime.start()
    turns = [{"speaker": "caller", "text": "it's 4111 1111", "offset_seconds": 1.0},
             {"speaker": "agent", "text": "go on", "offset_seconds": 2.0},
             {"speaker": "caller", "text": "1111 1111", "offset_seconds": 3.0}]
    assert runtime.complete(call_id, transcript=turns, outcome="info").status_code == 200
    detail = api.get(f"/v1/calls/{runtime.call(call_id).pk}").json()["data"]
    assert [turn["text"] for turn in detail["transcript"]] == ["it's [card_number]", "go on", "[card_number]"]
    assert detail["redaction"]["counts"] == {"card_number": 1}


def test_the_policy_is_per_organization(org, other_org):
    redaction_policy_update(org=org, kinds=["card_number", "email"])
    said = [{"speaker": "caller", "text": "mail me at pat.lee@example.com", "offset_seconds": 1.0}]
    shown = {}
    for each in (org, other_org):
        runtime = Runtime(each)
        call_id, _ = runtime.start()
        assert runtime.complete(call_id, transcript=said, outcome="info").status_code == 200
        shown[each.pk] = runtime.call(call_id)
    assert shown[org.pk].transcript[0]["text"] == "mail me at [email]"
    assert shown[org.pk].redaction["counts"] == {"email": 1}
    assert shown[other_org.pk].transcript[0]["text"] == "mail me at pat.lee@example.com"
    assert shown[other_org.pk].redaction["counts"] == {}


def test_structured_numbers_whose_purpose_is_the_value_are_kept(org, runtime):
    redaction_policy_update(org=org, kinds=list(KINDS))
    call_id, _ = runtime.start(from_number="+14155550123")
    assert runtime.event(call_id, type="callback_requested", data={
        "reason": "call me back at 415-555-0188", "callback_number": "+14155550188"}).status_code == 201
    assert runtime.complete(call_id, outcome="info", caller={"name": "Pat", "email": "pat@example.com"}).status_code \
        == 200
    call = runtime.call(call_id)
    callback = call.callback_requests.get()
    assert (callback.reason, callback.callback_number) == ("call me back at [phone_number]", "+14155550188")
    assert (call.from_number, call.caller_email) == ("+14155550123", "pat@example.com")


def test_call_ended_and_the_list_carry_the_redaction(org, runtime, api):
    call_id, _ = runtime.start()
    turns = [{"speaker": "caller", "text": "card 4111111111111111 and social 123-45-6789", "offset_seconds": 1.0}]
    assert runtime.complete(call_id, transcript=turns, outcome="info").status_code == 200
    call = runtime.call(call_id)
    expected = {"detector_version": DETECTOR_VERSION, "counts": {"card_number": 1, "government_id": 1},
                "recording_withheld": True}
    [ended] = events(org, "call.ended")
    assert ended.data["redaction"] == expected
    [listed] = api.get("/v1/calls").json()["data"]
    assert listed["redaction"] == expected
    assert api.get(f"/v1/calls/{call.pk}").json()["data"]["redaction"] == expected


# -- recordings -------------------------------------------------------------------------------------------------

CARD_TURNS = [{"speaker": "caller", "text": "my card is 4111 1111 1111 1111", "offset_seconds": 1.0}]


def test_a_recording_that_came_first_is_deleted_when_a_card_was_heard(org, runtime, api, tmp_path,
                                                                    django_capture_on_commit_callbacks):
    call_id, _ = runtime.start()
    assert runtime.upload(call_id).status_code == 201
    stored = Recording.objects.get().file.name
    assert (tmp_path / stored).exists()
    with django_capture_on_commit_callbacks(execute=True):  # the file goes once the completion commits
        assert runtime.complete(call_id, transcript=CARD_TURNS, outcome="info").status_code == 200
    call = runtime.call(call_id)
    assert not Recording.objects.exists() and not (tmp_path / stored).exists()
    response = api.get(f"/v1/calls/{call.pk}/recording")
    assert (response.status_code, response.json()) == (404, {"error": "recording_withheld"})
    assert api.get(f"/v1/calls/{call.pk}").json()["data"]["has_recording"] is False


def test_a_recording_that_comes_later_is_refused_quietly(org, runtime, api, tmp_path):
    call_id, _ = runtime.start()
    assert runtime.complete(call_id, transcript=CARD_TURNS, outcome="info").status_code == 200
    first, again = runtime.upload(call_id), runtime.upload(call_id)
    assert first.status_code == again.status_code == 201
    assert set(first.json()["data"]) == {"id", "call_id", "content_type", "size_bytes", "duration_seconds",
                                         "uploaded_at"}
    assert first.json()["data"]["id"] == again.json()["data"]["id"]
    assert not Recording.objects.exists() and not any(tmp_path.rglob("*.wav"))
    assert "call.recording_ready" not in event_types(org)
    response = api.get(f"/v1/calls/{runtime.call(call_id).pk}/recording")
    assert (response.status_code, response.json()) == (404, {"error": "recording_withheld"})


def test_an_organization_that_keeps_such_recordings_keeps_them(org, runtime, api):
    redaction_policy_update(org=org, keep_recordings_with_sensitive_data=True)
    call_id, _ = runtime.start()
    assert runtime.complete(call_id, transcript=CARD_TURNS, outcome="info").status_code == 200
    assert runtime.upload(call_id).status_code == 201
    call = runtime.call(call_id)
    assert call.redaction["recording_withheld"] is False and Recording.objects.filter(call=call).exists()
    assert "call.recording_ready" in event_types(org)
    assert api.get(f"/v1/calls/{call.pk}/recording").status_code == 200


def test_an_email_heard_does_not_withhold_the_recording(org, runtime):
    redaction_policy_update(org=org, kinds=["email"])
    call_id, _ = runtime.start()
    said = [{"speaker": "caller", "text": "pat@example.com", "offset_seconds": 1.0}]
    assert runtime.complete(call_id, transcript=said, outcome="info").status_code == 200
    assert runtime.upload(call_id).status_code == 201
    assert Recording.objects.count() == 1 and runtime.call(call_id).redaction["recording_withheld"] is False


def test_a_card_heard_is_withheld_even_where_cards_are_not_redacted(org, runtime):
    """The recording rule is about what was heard: an organization that keeps card numbers in its text still keeps
    no recording of them unless it says so."""
    redaction_policy_update(org=org, kinds=[])
    call_id, _ = runtime.start()
    assert runtime.complete(call_id, transcript=CARD_TURNS, outcome="info").status_code == 200
    call = runtime.call(call_id)
    assert call.transcript[0]["text"] == CARD_TURNS[0]["text"]
    assert call.redaction == {"detector_version": DETECTOR_VERSION, "counts": {}, "recording_withheld": True}


def test_a_runtime_error_never_echoes_a_card_number(org, runtime):
    call_id, _ = runtime.start()
    turns = [{"speaker": "4111 1111 1111 1111", "text": "hello", "offset_seconds": 1.0}]
    response = runtime.complete(call_id, transcript=turns, outcome="info")
    assert response.status_code == 400
    assert "4111" not in response.content.decode() and "[card_number]" in response.content.decode()


# -- calls stored before -------------------------------------------------------------------------------------------

def test_redact_stored_calls_redacts_old_calls_and_their_events_and_a_second_run_changes_nothing(org, capsys):
    call = Call.objects.create(
        organization=org, runtime_call_id="old-1", status="completed", started_at=T0, ended_at=T0,
        classification="real_engagement", summary="Paid with 4111 1111 1111 1111.",
        transcript=[{"speaker": "caller", "text": "it's 4111 1111 1111 1111", "offset_seconds": 1.0}],
        quality_checks=[{"name": "c", "verdict": "pass", "evidence": ["it's 4111 1111 1111 1111"], "gap_type": None,
                         "verification": "verified"}],
        redaction={"detector_version": None, "counts": {}, "recording_withheld": False},
    )
    Message.objects.create(organization=org, call=call, message="card 4111111111111111")
    emit(org=org, type="call.ended", data={"call_id": str(call.pk), "summary": "Paid with 4111 1111 1111 1111."})
    call_command("redact_stored_calls", "--org", str(org.pk))
    call.refresh_from_db()
    assert call.summary == "Paid with [card_number]."
    assert call.transcript[0]["text"] == "it's [card_number]"
    assert call.quality_checks[0]["evidence"] == ["it's [card_number]"]
    assert call.redaction == {"detector_version": DETECTOR_VERSION, "counts": {"card_number": 1},
                              "recording_withheld": True}
    assert stored_anywhere(["4111 1111 1111 1111", "4111111111111111"]) == []
    before = (call.updated_at, [bytes(e.payload) for e in Event.objects.order_by("id")])
    capsys.readouterr()
    call_command("redact_stored_calls")
    call.refresh_from_db()
    assert (call.updated_at, [bytes(e.payload) for e in Event.objects.order_by("id")]) == before
    assert "0 call(s) redacted" in capsys.readouterr().out


def test_redact_stored_calls_keeps_to_its_organization_and_dates(org, other_org):
    def old(owner, runtime_id, started_at):
        return Call.objects.create(
            organization=owner, runtime_call_id=runtime_id, status="completed", started_at=started_at,
            summary="4111 1111 1111 1111", redaction={"detector_version": None, "counts": {},
                                                      "recording_withheld": False})

    mine, theirs = old(org, "a", T0), old(other_org, "b", T0)
    earlier = old(org, "c", T0.replace(year=2020))
    call_command("redact_stored_calls", "--org", str(org.pk), "--since", "2026-01-01")
    for call in (mine, theirs, earlier):
        call.refresh_from_db()
    assert mine.summary == "[card_number]"
    assert theirs.summary == earlier.summary == "4111 1111 1111 1111"


def test_an_order_answer_in_call_ended_is_redacted(org, runtime):
    call_id, _ = runtime.start()
    body = completion()
    body["order"]["order_answers"][0]["answer"] = "charge 4111 1111 1111 1111"
    assert runtime.complete(call_id, order=body["order"]).status_code == 200
    [ended] = events(org, "call.ended")
    assert ended.data["order"]["order_answers"][0]["answer"] == "charge [card_number]"
    assert ended.data["summary"] == body["summary"]


def test_the_search_finds_a_value_kept_in_clear(org, runtime):
    """The contract's search is real: where the organization redacts nothing, the card is found where it lies."""
    redaction_policy_update(org=org, kinds=[])
    call_id, _ = runtime.start()
    assert runtime.complete(call_id, transcript=CARD_TURNS, outcome="info").status_code == 200
    assert stored_anywhere(["4111 1111 1111 1111"]) == ["calls_call"]
