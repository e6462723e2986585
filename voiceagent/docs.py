"""The API reference page: Redoc from the project's own static files (drf-spectacular-sidecar), never a CDN."""

from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularRedocView

# Redoc builds its styles at run time (inline <style>) and renders the schema in a web worker: the one page whose
# policy allows those, still with scripts from this origin only.
DOCS_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'self'; "
    "frame-ancestors 'none'; form-action 'self'"
)


class ApiDocsView(SpectacularRedocView):
    template_name = "voiceagent/redoc.html"

    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        response["Content-Security-Policy"] = DOCS_POLICY
        return response
