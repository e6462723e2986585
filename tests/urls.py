"""The test build's URLs: the real ones plus a view that raises, to prove 500s render as the JSON of
docs/api.md#errors."""

from django.urls import include, path
from drf_spectacular.utils import extend_schema

from api.views import OrgAPIView


class BoomView(OrgAPIView):
    @extend_schema(exclude=True)
    def get(self, request):
        raise RuntimeError("boom: an unexpected failure with a secret-looking detail")


urlpatterns = [
    path("v1/__test__/boom", BoomView.as_view()),
    path("", include("voiceagent.urls")),
]

handler404 = "api.fallbacks.not_found"
handler500 = "api.fallbacks.server_error"
