"""App URLs of the calls app outside /v1: the signed recording download (its token is its authorization), with the
token in the query string, which the access log leaves out (calls/recordings.py). The older path form is gone: a
path is what access logs record."""

from django.urls import path

from .recordings import download

urlpatterns = [
    path("", download, name="recording-download"),
]
