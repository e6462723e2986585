"""GET /v1/event-types: the nine types with complete JSON Schemas, the one source the test suite validates every
emitted event against (tests/support/events.py reads webhooks.catalog, which this endpoint serves)."""

import jsonschema
import pytest

from webhooks import catalog
from webhooks.models import EVENT_TYPES

FORMATS = jsonschema.Draft202012Validator.FORMAT_CHECKER


def test_the_catalog_lists_the_nine_types_with_their_schemas(read_api):
    response = read_api.get("/v1/event-types")
    assert response.status_code == 200
    served = response.json()["data"]
    assert [item["type"] for item in served] == list(EVENT_TYPES)
    assert served == catalog.catalog()
    for item in served:
        assert set(item) == {"type", "description", "schema"} and item["description"]
        schema = item["schema"]
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["additionalProperties"] is False
        assert schema["properties"]["type"] == {"const": item["type"]}


def _data_schema(event_type):
    return catalog.envelope_schema(event_type)["properties"]["data"]


@pytest.mark.parametrize("event_type", EVENT_TYPES)
def test_every_data_schema_requires_every_field_and_allows_nothing_else(event_type):
    schema = _data_schema(event_type)
    assert schema["additionalProperties"] is False
    if event_type == "call.ended":
        assert set(schema["properties"]) - set(schema["required"]) == {"order_status", "order"}
    else:
        assert set(schema["required"]) == set(schema["properties"])


@pytest.mark.parametrize("event_type", EVENT_TYPES)
def test_the_examples_for_test_deliveries_validate(org, event_type):
    envelope = {
        "id": "evt_" + "0" * 32, "type": event_type, "created_at": "2026-11-24T10:00:00.000Z", "api_version": "v1",
        "data": catalog.example_data(event_type, org),
    }
    jsonschema.Draft202012Validator(catalog.envelope_schema(event_type), format_checker=FORMATS).validate(envelope)


def test_a_payload_with_an_extra_or_missing_field_fails_its_schema(org):
    data = catalog.example_data("call.message_taken", org)
    validator = jsonschema.Draft202012Validator(_data_schema("call.message_taken"))
    assert validator.is_valid(data)
    assert not validator.is_valid({**data, "surprise": 1})
    assert not validator.is_valid({k: v for k, v in data.items() if k != "caller_name"})
    ended = catalog.example_data("call.ended", org)
    assert not jsonschema.Draft202012Validator(_data_schema("call.ended")).is_valid({**ended, "outcome": "message"})
