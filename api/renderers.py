"""The one renderer of /v1: DRF's JSON, and pages whose items PostgreSQL has rendered already."""

import json

from rest_framework import renderers


class RenderedPage:
    """A list envelope whose items are JSON text already: the renderer writes it as it is."""

    __slots__ = ("items", "has_more", "next_cursor")

    def __init__(self, items: list[str], has_more: bool, next_cursor: str | None):
        self.items, self.has_more, self.next_cursor = items, has_more, next_cursor

    def render(self) -> bytes:
        return (
            f'{{"data":[{",".join(self.items)}],"has_more":{"true" if self.has_more else "false"},'
            f'"next_cursor":{json.dumps(self.next_cursor)}}}'
        ).encode()


class JSONRenderer(renderers.JSONRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, RenderedPage):
            return data.render()
        return super().render(data, accepted_media_type, renderer_context)
