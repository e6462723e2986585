"""The rungs between the stack's ceiling (bench/bare_urls.py) and `/v1/me` (bench.api_floor): the one Redis round
trip every /v1 request makes (the key's epoch and two rate limits, one EVALSHA: core/counters.py), answered by a
plain Django view, then by a DRF view with the project's DRF settings and no authentication."""

from django.http import JsonResponse
from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from bench.bare_urls import urlpatterns as bare_urlpatterns
from core import counters

_RATES = (counters.Rate("floor:key", 10**9), counters.Rate("floor:org", 10**9))


def _counted() -> dict:
    epoch, states, _ = counters.epoch_and_count("floor:epoch", _RATES, mode="hit")
    return {"data": {"epoch": epoch, "remaining": states[0].remaining}}


def django_redis(request):
    return JsonResponse(_counted())


class DrfRedis(APIView):
    authentication_classes = ()
    permission_classes = ()

    def get(self, request):
        return Response(_counted())


urlpatterns = [*bare_urlpatterns, path("floor/django-redis", django_redis), path("floor/drf-redis", DrfRedis.as_view())]
