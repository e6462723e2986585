from django.http import JsonResponse
from django.urls import path


def bare(request):
    """The ceiling: a Django view that returns JSON with no auth, no database, no DRF and no middleware."""
    return JsonResponse({"data": {"ok": True}})


urlpatterns = [path("bench/bare", bare)]
