"""The events an organization's changes wrote, and their check against the product's own catalog, as
`GET /v1/event-types` serves it (tests/webhooks/test_event_catalog.py pins that the endpoint serves exactly
`webhooks.catalog.catalog()`)."""

import json

import jsonschema

from webhooks.catalog import envelope_schema
from webhooks.models import Event

FORMATS = jsonschema.Draft202012Validator.FORMAT_CHECKER


def events(org, type=None) -> list[Event]:
    qs = Event.objects.filter(organization=org).order_by("created_at", "id")
    if type:
        qs = qs.filter(type=type)
    return list(qs)


def event_types(org) -> list[str]:
    """The org's event types, sorted: events of one transaction may share a timestamp, so no order is implied."""
    return sorted(e.type for e in events(org))


def assert_valid_event(event: Event) -> None:
    """The stored bytes of `event` validate against the catalog's schema of its type."""
    schema = envelope_schema(event.type)
    jsonschema.Draft202012Validator(schema, format_checker=FORMATS).validate(json.loads(event.payload))
