"""One call field name, two definitions at locations that never meet (docs/api.md#call-fields): `party_size` is text
at L1 and a number at L2. The runtime is served both with their locations, a call stores the name as its location's
definition reads it, the calls list and export filter under every reading the key sees, the export has one column
for the name, and analytics sum the numbers the calls stored."""

import pytest
from rest_framework.test import APIClient

from calls.models import Call
from knowledge import services
from tests.factories import make_key
from tests.support.exports import exported
from tests.support.runtime import Runtime


def _location(org, name, phone):
    return services.location_create(org=org, name=name, address="1 Main St", timezone="UTC", phone_number=phone)


@pytest.fixture
def world(org):
    l1, l2 = _location(org, "L1", "+12125550101"), _location(org, "L2", "+12125550102")
    text = services.call_field_create(org=org, name="party_size", label="Party", type="string", location_ids=[l1.pk])
    number = services.call_field_create(org=org, name="party_size", label="Guests", type="number",
                                        location_ids=[l2.pk])
    runtime = Runtime(org)
    calls = {}
    for key, location, value in (("l1_text_4", l1, "4"), ("l1_four", l1, "four"), ("l2_number_4", l2, 4)):
        call_id, _ = runtime.start(location_id=location.pk)
        done = runtime.complete(call_id, outcome="question", fields={"party_size": {"value": value}})
        assert done.status_code == 200, done.content
        calls[key] = str(runtime.call(call_id).pk)
    return {"l1": l1, "l2": l2, "text": text, "number": number, "runtime": runtime, "calls": calls}


def _ids(response) -> set[str]:
    assert response.status_code == 200, response.content
    return {item["id"] for item in response.json()["data"]}


def _refused(response, *problems):
    assert (response.status_code, response.json()) == (400, {
        "error": "Validation failed", "details": {"formErrors": [], "fieldErrors": {"fields": list(problems)}}})


def test_the_runtime_gets_both_and_a_call_stores_its_locations_reading(org, world):
    served = world["runtime"].knowledge().json()["data"]["call_fields"]
    assert sorted((field["name"], field["type"], field["location_ids"]) for field in served) == sorted([
        ("party_size", "string", [str(world["l1"].pk)]), ("party_size", "number", [str(world["l2"].pk)])])
    runtime = world["runtime"]
    assert Call.objects.get(pk=world["calls"]["l1_text_4"]).fields["party_size"]["type"] == "string"
    assert Call.objects.get(pk=world["calls"]["l2_number_4"]).fields["party_size"] == {
        "label": "Guests", "type": "number", "value": 4, "evidence": None, "evidence_verified": False}
    for location, value, problem in ((world["l1"], 4, "party_size: must be a non-blank string"),
                                     (world["l2"], "4", "party_size: must be a number")):
        call_id, _ = runtime.start(location_id=location.pk)
        _refused(runtime.complete(call_id, outcome="question", fields={"party_size": {"value": value}}), problem)


def test_a_filter_matches_every_reading_the_key_sees(api, org, admin, world):
    calls = world["calls"]
    assert _ids(api.get("/v1/calls", {"fields.party_size": "4"})) == {calls["l1_text_4"], calls["l2_number_4"]}
    assert _ids(api.get("/v1/calls", {"fields.party_size": "four"})) == {calls["l1_four"]}
    _refused(api.get("/v1/calls", {"fields.party_size": " "}), "party_size: must be a non-blank string",
             "party_size: must be a number")
    header, *lines = exported(api, "calls", {"fields.party_size": "4"})
    assert header.count("fields.party_size") == 1
    assert sorted(line[header.index("fields.party_size")] for line in lines) == ["4", "4"]
    assert {line[0] for line in lines} == {calls["l1_text_4"], calls["l2_number_4"]}

    l1_key = APIClient()
    l1_key.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(org, admin=admin, location_ids=[world['l1'].pk])[1]}")
    assert _ids(l1_key.get("/v1/calls", {"fields.party_size": "4"})) == {calls["l1_text_4"]}
    # L2's definition is not the key's: its reading and its problem are absent.
    _refused(l1_key.get("/v1/calls", {"fields.party_size": " "}), "party_size: must be a non-blank string")
    header, *lines = exported(l1_key, "calls")
    assert header.count("fields.party_size") == 1
    assert sorted(line[header.index("fields.party_size")] for line in lines) == ["4", "four"]


def test_analytics_sum_the_numbers_the_calls_stored(api, world):
    response = api.get("/v1/analytics/calls", {"since": "2026-11-20", "until": "2026-11-20", "group_by": "location"})
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["totals"]["fields"] == {"party_size": {"sum": 4, "count": 1, "average": 4.0}}
    by_location = {bucket["key"]: bucket["fields"]["party_size"]["count"] for bucket in data["buckets"]}
    assert by_location == {str(world["l1"].pk): 0, str(world["l2"].pk): 1}
