"""A number sent as text is bounded before it is converted (core/numbers.py): a call-field filter of `1e999999999`
once kept a gunicorn worker busy for good (an unbounded Decimal turned into an int), and a handful of such requests
stopped the API, the dashboard and the agent runtime for every organization. Each answer here must come at once:
the request runs under a deadline, and a conversion that started would miss it by minutes."""

import threading

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connections

from calls.models import Call, Recording
from core import jsonparse, numbers
from dashboard.forms import BoundedIntegerField
from knowledge import services
from tests.support.runtime import Runtime

DEADLINE_SECONDS = 5  # a bounded parse answers in milliseconds; the unbounded one took 40 s for 1e1000000
HUGE = [  # each with the problem it is answered with
    ("1e999999999", numbers.NOT_A_NUMBER), ("9e-999999999", numbers.NOT_A_NUMBER), ("9" * 1_000, numbers.TOO_LONG),
    ("-1e100000", numbers.NOT_A_NUMBER), ("1e9999", numbers.OUT_OF_RANGE), ("9e-9999", numbers.OUT_OF_RANGE),
]


def answered_within(seconds, request):
    """`request()`'s result (or its exception, raised again), or fails when it has not returned after `seconds`
    (the thread is left to finish: a conversion cannot be interrupted)."""
    outcome = {}
    # The thread works in the test's own connection and transaction, as Django's live server thread does.
    shared = connections["default"]
    shared.inc_thread_sharing()

    def run():
        connections["default"] = shared
        try:
            outcome["result"] = request()
        except Exception as exc:  # noqa: BLE001 - handed to the test's thread
            outcome["error"] = exc
        finally:
            shared.dec_thread_sharing()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"no answer within {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


@pytest.fixture
def number_field(org):
    services.call_field_create(org=org, name="party_size", label="Party size", type="number")


def _validation_failed(response, field_errors):
    assert response.status_code == 400, response.content
    assert response.json() == {"error": "Validation failed", "details": {"formErrors": [], "fieldErrors": field_errors}}


@pytest.mark.parametrize(("value", "problem"), HUGE)
@pytest.mark.parametrize("path", ["/v1/calls", "/v1/exports/calls.csv"])
def test_a_huge_number_filter_answers_400_at_once(api, number_field, path, value, problem):
    response = answered_within(DEADLINE_SECONDS, lambda: api.get(path, {"fields.party_size": value}))
    _validation_failed(response, {"fields": [f"party_size: {problem}"]})


@pytest.mark.parametrize("path", ["/v1/calls", "/v1/exports/calls.csv"])
def test_ten_thousand_digits_in_a_query_string_are_414_at_once(api, number_field, path):
    response = answered_within(DEADLINE_SECONDS, lambda: api.get(path, {"fields.party_size": "9" * 10_000}))
    assert response.status_code == 414
    assert response.json() == {"error": "uri_too_long"}


@pytest.mark.parametrize(("value", "problem"), [
    ("1e308", None), ("-2.5e-300", None), ("1e309", numbers.OUT_OF_RANGE), ("1e-309", numbers.OUT_OF_RANGE),
    ("1e99999", numbers.NOT_A_NUMBER), ("0x10", numbers.NOT_A_NUMBER), ("1_000", numbers.NOT_A_NUMBER),
    ("9" * 64, None), ("9" * 65, numbers.TOO_LONG),
])
def test_the_number_grammar_bounds_length_and_exponent(api, number_field, value, problem):
    response = api.get("/v1/calls", {"fields.party_size": value})
    if problem is None:
        assert response.status_code == 200, response.content
    else:
        _validation_failed(response, {"fields": [f"party_size: {problem}"]})


def test_a_bounded_number_still_filters_exactly(api, org, number_field):
    runtime = Runtime(org)
    call_id, _ = runtime.start()
    response = runtime.complete(call_id, outcome="question", fields={"party_size": {"value": 10**20 + 1}})
    assert response.status_code == 200, response.content
    response = api.get("/v1/calls", {"fields.party_size": "100000000000000000001"})
    assert [item["id"] for item in response.json()["data"]] == [str(Call.objects.get().id)]
    assert api.get("/v1/calls", {"fields.party_size": "1.00000000000000000001e20"}).json()["data"] != []
    assert api.get("/v1/calls", {"fields.party_size": "1.0000000000000000000e20"}).json()["data"] == []


def test_a_choice_longer_than_a_number_still_filters(api, org):
    choice = "x" * 150
    services.call_field_create(org=org, name="note", label="Note", type="enum", choices=[choice])
    assert api.get("/v1/calls", {"fields.note": choice}).status_code == 200
    _validation_failed(api.get("/v1/calls", {"fields.note": "y" * 1001}),
                       {"fields": ["note: must be at most 1000 characters"]})


@pytest.mark.parametrize("literal", ["9" * 10_000, "1" + "0" * 100 + "e5", "0." + "1" * 100])
def test_a_json_body_with_a_huge_number_literal_is_400_at_once(org, literal):
    runtime = Runtime(org)
    body = '{"runtime_call_id": "c-1", "started_at": "2026-11-20T12:00:00Z", "from_number": "+14155550123", ' \
           f'"knowledge_version": {literal}}}'
    response = answered_within(DEADLINE_SECONDS, lambda: runtime.client.post(
        f"{runtime.prefix}/calls", body, content_type="application/json"))
    assert response.status_code == 400, response.content
    assert response.json()["details"]["formErrors"] == [
        f"Malformed JSON body: JSON parse error - Numbers may have at most {numbers.MAX_CHARS} characters."]
    assert not Call.objects.exists()


def test_a_long_digit_run_inside_a_string_is_text_not_a_number():
    assert jsonparse.loads('{"text": "' + "4" * 200 + '", "n": 1.5}') == {"text": "4" * 200, "n": 1.5}


def test_a_recording_duration_of_ten_thousand_digits_is_400_at_once(org):
    runtime = Runtime(org)
    call_id, _ = runtime.start()
    upload = SimpleUploadedFile("call.wav", b"RIFF-fake", content_type="audio/wav")
    response = answered_within(DEADLINE_SECONDS, lambda: runtime.client.post(
        f"{runtime.prefix}/calls/{call_id}/recording", {"file": upload, "duration_seconds": "9" * 10_000},
        format="multipart"))
    _validation_failed(response, {"duration_seconds": ["A whole number of seconds."]})
    assert not Recording.objects.exists()


def test_a_dashboard_number_field_of_ten_thousand_digits_is_a_form_error():
    field = BoundedIntegerField(min_value=1, max_value=1000)
    with pytest.raises(ValidationError) as refused:
        answered_within(DEADLINE_SECONDS, lambda: field.clean("9" * 10_000))
    assert refused.value.messages == ["Enter a whole number."]
