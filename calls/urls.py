"""App URLs of the calls app outside /v1: the signed recording download (its token is its authorization), with the
token in the query string (kept out of access logs; calls/recordings.py) or, for links minted before, the path."""

from django.urls import path

from .recordings import download

urlpatterns = [
    path("", download, name="recording-download"),
    path("<str:token>", download, name="recording-download-by-path"),
]
