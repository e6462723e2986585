"""The event schemas the tests validate against: the product's own catalog, as `GET /v1/event-types` serves it
(tests/webhooks/test_event_catalog.py pins that the endpoint serves exactly `webhooks.catalog.catalog()`)."""

import json

import jsonschema

from webhooks.catalog import envelope_schema

FORMATS = jsonschema.Draft202012Validator.FORMAT_CHECKER


def assert_valid_envelope(event) -> None:
    """The stored bytes of `event` (a webhooks Event) validate against the catalog's schema of its type."""
    schema = envelope_schema(event.type)
    jsonschema.Draft202012Validator(schema, format_checker=FORMATS).validate(json.loads(event.payload))
