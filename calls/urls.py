"""App URLs of the calls app outside /v1: the signed recording download (its token is its authorization)."""

from django.urls import path

from .recordings import download

urlpatterns = [
    path("<str:token>", download, name="recording-download"),
]
