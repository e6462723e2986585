"""The runtime's completion reports the organization's call fields: each type's valid value stored and shown (the
API, `call.ended`), each invalid one refused with its exact message under `fieldErrors.fields` and nothing stored,
evidence kept only when the transcript says it, required fields only on real engagements, and past calls kept as
they were when a field is renamed or deleted."""

import json

import pytest

from calls.models import Call
from knowledge import services
from knowledge.models import CallField
from tests.support.events import events
from tests.support.runtime import TRANSCRIPT


@pytest.fixture
def fields(org):
    services.call_field_create(org=org, name="pizza_count", label="Pizzas", type="number")
    services.call_field_create(org=org, name="caller_city", label="City", type="string")
    services.call_field_create(org=org, name="wants_delivery", label="Delivery", type="boolean")
    services.call_field_create(org=org, name="pickup_date", label="Pickup date", type="date")
    services.call_field_create(org=org, name="crust", label="Crust", type="enum", choices=["thin", "deep dish"])


def _complete(runtime, fields, **overrides):
    call_id, _ = runtime.start()
    return call_id, runtime.complete(call_id, outcome="question", fields=fields, **overrides)


def _refused(response, *problems):
    assert response.status_code == 400, response.content
    assert response.json() == {"error": "Validation failed",
                               "details": {"formErrors": [], "fieldErrors": {"fields": list(problems)}}}


VALID = [
    ("pizza_count", 2, "Pizzas", "number"),
    ("pizza_count", 2.5, "Pizzas", "number"),
    ("caller_city", "Oakland", "City", "string"),
    ("wants_delivery", False, "Delivery", "boolean"),
    ("pickup_date", "2026-11-21", "Pickup date", "date"),
    ("crust", "deep dish", "Crust", "enum"),
]


@pytest.mark.parametrize(("name", "value", "label", "kind"), VALID)
def test_each_types_valid_value_is_stored_and_shown(api, org, runtime, fields, name, value, label, kind):
    call_id, response = _complete(runtime, {name: {"value": value}})
    assert response.status_code == 200, response.content
    shown = {name: {"label": label, "type": kind, "value": value, "evidence": None, "evidence_verified": False}}
    assert response.json()["data"]["fields"] == shown
    call = runtime.call(call_id)
    assert call.fields == shown
    assert api.get(f"/v1/calls/{call.pk}").json()["data"]["fields"] == shown
    [ended] = events(org, "call.ended")
    assert json.loads(ended.payload)["data"]["fields"] == shown


INVALID = [
    ("pizza_count", "2", "pizza_count: must be a number"),
    ("pizza_count", True, "pizza_count: must be a number"),
    ("pizza_count", [2], "pizza_count: must be a number"),
    ("caller_city", 7, "caller_city: must be a non-blank string"),
    ("caller_city", "  ", "caller_city: must be a non-blank string"),
    ("caller_city", "x" * 1001, "caller_city: must be at most 1000 characters"),
    ("wants_delivery", "yes", "wants_delivery: must be true or false"),
    ("wants_delivery", 1, "wants_delivery: must be true or false"),
    ("pickup_date", "2026-02-30", "pickup_date: must be a date (YYYY-MM-DD)"),
    ("pickup_date", "21/11/2026", "pickup_date: must be a date (YYYY-MM-DD)"),
    ("pickup_date", "2026-11-21T10:00:00Z", "pickup_date: must be a date (YYYY-MM-DD)"),
    ("crust", "Thin", "crust: must be one of: thin, deep dish"),
    ("crust", 1, "crust: must be one of: thin, deep dish"),
]


@pytest.mark.parametrize(("name", "value", "problem"), INVALID)
def test_each_invalid_value_is_refused_with_its_message_and_nothing_is_stored(org, runtime, fields, name, value,
                                                                               problem):
    call_id, response = _complete(runtime, {name: {"value": value}})
    _refused(response, problem)
    assert runtime.call(call_id).status == Call.Status.IN_PROGRESS
    assert events(org, "call.ended") == []


@pytest.mark.parametrize(("entry", "problem"), [
    (4, "pizza_count: must be an object {value, evidence?}"),
    ({}, "pizza_count: value is required"),
    ({"value": 4, "quote": "x"}, "pizza_count: unknown key(s): quote"),
    ({"value": 4, "evidence": 4}, "pizza_count: evidence must be a string of at most 500 characters"),
    ({"value": 4, "evidence": "x" * 501}, "pizza_count: evidence must be a string of at most 500 characters"),
])
def test_a_malformed_entry_is_refused_with_its_message(runtime, fields, entry, problem):
    _refused(_complete(runtime, {"pizza_count": entry})[1], problem)


def test_an_unknown_name_is_refused_and_every_problem_is_reported_at_once(runtime, fields):
    reported = {"pizzas": {"value": 1}, "crust": {"value": "stuffed"}, "pizza_count": {"value": 1}}
    response = _complete(runtime, reported)[1]
    _refused(response, "crust: must be one of: thin, deep dish", "pizzas: not a call field of this organization")


def test_a_name_that_is_no_field_name_is_reported_whole(runtime, fields):
    _refused(_complete(runtime, {"pizza.count": {"value": 1}})[1],
             "'pizza.count': not a call field of this organization")


def test_fields_must_be_an_object(runtime, fields):
    response = _complete(runtime, ["pizza_count"])[1]
    assert response.status_code == 400
    assert list(response.json()["details"]["fieldErrors"]) == ["fields"]


def test_another_orgs_field_is_unknown(runtime, fields, other_org):
    services.call_field_create(org=other_org, name="table_number", label="Table", type="number")
    _refused(_complete(runtime, {"table_number": {"value": 1}})[1],
             "table_number: not a call field of this organization")


def test_a_field_of_another_location_does_not_apply(org, runtime):
    here = services.location_create(org=org, name="Here", address="a", timezone="UTC", phone_number="+14155550100")
    there = services.location_create(org=org, name="There", address="a", timezone="UTC", phone_number="+14155550101")
    services.call_field_create(org=org, name="patio", label="Patio", type="boolean", location_ids=[there.pk])
    call_id, _ = runtime.start(location_id=here.pk)
    _refused(runtime.complete(call_id, outcome="question", fields={"patio": {"value": True}}),
             "patio: does not apply to this call's location")
    call_id, _ = runtime.start(location_id=there.pk)
    assert runtime.complete(call_id, outcome="question", fields={"patio": {"value": True}}).status_code == 200


def test_evidence_is_kept_when_the_transcript_says_it_whitespace_and_case_aside(runtime, fields):
    quote = "a LARGE   pepperoni\npizza"
    call_id, response = _complete(runtime, {"pizza_count": {"value": 1, "evidence": quote}})
    assert response.json()["data"]["fields"]["pizza_count"] == {
        "label": "Pizzas", "type": "number", "value": 1, "evidence": quote, "evidence_verified": True}
    # The quote is marked in the turn that says it, numbered after the three quality checks.
    call = runtime.call(call_id)
    [[start, end, number]] = call.evidence_marks[1]
    assert (TRANSCRIPT[1]["text"][start:end], number) == ("a large pepperoni pizza", 4)


def test_evidence_the_transcript_does_not_say_is_dropped_and_the_value_unverified(runtime, fields):
    call_id, response = _complete(runtime, {"pizza_count": {"value": 3, "evidence": "three pizzas please"}})
    assert response.json()["data"]["fields"]["pizza_count"] == {
        "label": "Pizzas", "type": "number", "value": 3, "evidence": None, "evidence_verified": False}
    assert all(number <= 3 for turn in runtime.call(call_id).evidence_marks for _, _, number in turn)


def test_a_quote_spanning_two_turns_is_not_verified(runtime, fields):
    quote = "How can I help? I'd like"
    response = _complete(runtime, {"pizza_count": {"value": 1, "evidence": quote}})[1]
    assert response.json()["data"]["fields"]["pizza_count"]["evidence_verified"] is False


def test_a_required_field_must_be_reported_on_a_real_engagement_only(org, runtime, fields):
    services.call_field_create(org=org, name="party_size", label="Party size", type="number", required=True)
    _refused(_complete(runtime, {})[1], "party_size: is required")
    _refused(_complete(runtime, {"party_size": {"value": None}})[1], "party_size: is required")
    call_id, response = _complete(runtime, {}, classification="robocall")
    assert response.status_code == 200
    assert runtime.call(call_id).fields == {}


def test_renaming_or_deleting_a_field_leaves_past_calls_as_they_were(org, api, runtime, fields):
    call_id, _ = _complete(runtime, {"pizza_count": {"value": 2}})
    field = CallField.objects.get(organization=org, name="pizza_count")
    services.call_field_update(call_field=field, name="pies", label="Pies")
    call = runtime.call(call_id)
    shown = {"pizza_count": {"label": "Pizzas", "type": "number", "value": 2, "evidence": None,
                             "evidence_verified": False}}
    assert api.get(f"/v1/calls/{call.pk}").json()["data"]["fields"] == shown
    services.call_field_delete(call_field=CallField.objects.get(organization=org, name="pies"))
    assert api.get(f"/v1/calls/{call.pk}").json()["data"]["fields"] == shown


def test_a_retried_completion_keeps_the_first_fields(runtime, fields):
    call_id, _ = _complete(runtime, {"pizza_count": {"value": 2}})
    again = runtime.complete(call_id, outcome="question", fields={"pizza_count": {"value": 5}})
    assert again.status_code == 200
    assert runtime.call(call_id).fields["pizza_count"]["value"] == 2


# --- GET /v1/calls?fields.<name>=<value> ------------------------------------------------------------------------

FILTERED = {  # per call: the values reported; per filter: the calls it must return
    "a": {"pizza_count": 2, "caller_city": "Oakland", "wants_delivery": True, "pickup_date": "2026-11-21",
          "crust": "thin"},
    "b": {"pizza_count": 2.5, "caller_city": "oakland", "wants_delivery": False, "pickup_date": "2026-11-22",
          "crust": "deep dish"},
    "c": {"pizza_count": 100000000000000000001},
}


@pytest.fixture
def filtered_calls(runtime, fields):
    ids = {}
    for key, values in FILTERED.items():
        call_id, response = _complete(runtime, {name: {"value": value} for name, value in values.items()})
        assert response.status_code == 200, response.content
        ids[key] = str(runtime.call(call_id).pk)
    return ids


@pytest.mark.parametrize(("query", "expected"), [
    ("fields.pizza_count=2", {"a"}),
    ("fields.pizza_count=2.0", {"a"}),
    ("fields.pizza_count=2.5", {"b"}),
    ("fields.pizza_count=3", set()),
    ("fields.caller_city=Oakland", {"a"}),
    ("fields.caller_city=oakland", {"b"}),
    ("fields.wants_delivery=true", {"a"}),
    ("fields.wants_delivery=false", {"b"}),
    ("fields.pickup_date=2026-11-22", {"b"}),
    ("fields.crust=deep%20dish", {"b"}),
    ("fields.crust=thin&fields.pizza_count=2", {"a"}),
    ("fields.crust=thin&fields.pizza_count=20", set()),
    ("fields.pizza_count=100000000000000000001", {"c"}),
    ("fields.pizza_count=100000000000000000000", set()),
])
def test_filters_return_exactly_the_matching_calls(api, filtered_calls, query, expected):
    response = api.get(f"/v1/calls?{query}")
    assert response.status_code == 200, response.content
    assert {item["id"] for item in response.json()["data"]} == {filtered_calls[key] for key in expected}


@pytest.mark.parametrize(("query", "field_errors"), [
    ("fields.pizzas=2", {"fields": ["pizzas: not a call field of this organization"]}),
    ("fields.pizza_count=two", {"fields": ["pizza_count: must be a number"]}),
    ("fields.pizza_count=nan", {"fields": ["pizza_count: must be a number"]}),
    ("fields.pizza_count=-Infinity", {"fields": ["pizza_count: must be a number"]}),
    ("fields.wants_delivery=yes", {"fields": ["wants_delivery: must be true or false"]}),
    ("fields.pickup_date=2026-13-01", {"fields": ["pickup_date: must be a date (YYYY-MM-DD)"]}),
    ("fields.crust=stuffed", {"fields": ["crust: must be one of: thin, deep dish"]}),
    ("fields.=x", {"fields": ["'': not a call field of this organization"]}),
    ("fields.a.b=x", {"fields": ["'a.b': not a call field of this organization"]}),
])
def test_a_filter_on_an_unknown_field_or_of_the_wrong_type_is_400(api, fields, query, field_errors):
    response = api.get(f"/v1/calls?{query}")
    assert response.status_code == 400
    assert response.json() == {"error": "Validation failed",
                               "details": {"formErrors": [], "fieldErrors": field_errors}}


def test_another_orgs_field_name_is_unknown_to_the_filter(api, other_org):
    services.call_field_create(org=other_org, name="table_number", label="Table", type="number")
    response = api.get("/v1/calls?fields.table_number=1")
    assert response.json()["details"]["fieldErrors"] == {
        "fields": ["table_number: not a call field of this organization"]}
