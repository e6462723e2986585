"""Content negotiation for /v1: the answer is always JSON.

DRF negotiates before it authenticates, so an `Accept: text/html` (406) or a `?format=` (404) would
otherwise answer a request with no key before the uniform 401. Request bodies are still checked: a
non-JSON Content-Type gets the 400 of the error renderer.
"""

from rest_framework.negotiation import DefaultContentNegotiation


class AlwaysJSON(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type
