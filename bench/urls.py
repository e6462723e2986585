from django.http import JsonResponse
from django.urls import include, path


def bare(request):
    """The ceiling: a Django view that returns JSON with no auth, no database and no DRF."""
    return JsonResponse({"data": {"ok": True}})


urlpatterns = [
    path("bench/bare", bare),
    path("", include("voiceagent.urls")),
]
