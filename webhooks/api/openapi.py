"""The OpenAPI document's `webhooks` section (OpenAPI 3.1): one POST per event type, with the catalog's envelope
schema as its body, so the document and `GET /v1/event-types` can never disagree."""

from ..catalog import DESCRIPTIONS, envelope_schema
from ..models import EVENT_TYPES

_HEADERS = [
    ("webhook-id", "The event id (`evt_...`): the same on every attempt and replay. Deduplicate on it."),
    ("webhook-timestamp", "Unix seconds of this attempt. Refuse more than 5 minutes of skew."),
    ("webhook-signature", "`v1,<base64 HMAC-SHA256>` of `{webhook-id}.{webhook-timestamp}.{raw body}`, space-separated "
     "when two secrets sign during a rotation."),
]


def _operation(event_type: str) -> dict:
    return {
        "operationId": f"webhook_{event_type.replace('.', '_')}",
        "summary": event_type,
        "description": DESCRIPTIONS[event_type] + " Signed per Standard Webhooks; see docs/webhooks.md.",
        "tags": ["Webhook events"],
        "parameters": [
            {"name": name, "in": "header", "required": True, "description": text, "schema": {"type": "string"}}
            for name, text in _HEADERS
        ],
        "requestBody": {"required": True, "content": {"application/json": {"schema": envelope_schema(event_type)}}},
        "responses": {
            "2XX": {"description": "Received. Answer within 15 s; anything else is retried (docs/webhooks.md)."},
            "410": {"description": "Gone: the subscription is disabled at once."},
        },
    }


def add_event_webhooks(result, generator, request, public):
    """drf-spectacular postprocessing hook: every event type as OpenAPI 3.1 webhooks."""
    result["webhooks"] = {event_type: {"post": _operation(event_type)} for event_type in EVENT_TYPES}
    return result
