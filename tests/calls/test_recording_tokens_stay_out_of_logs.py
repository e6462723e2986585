"""A recording URL's token is an hour's playback, so it never reaches a log line: the minted URL carries it in the
query string, which gunicorn's access log format (gunicorn.conf.py's, formatted by gunicorn itself) does not write,
nor do Django's request logging and our own lines."""

import logging
import runpy
import shlex
from datetime import timedelta
from types import SimpleNamespace
from urllib.parse import parse_qs, unquote, urlsplit

from django.conf import settings as django_settings
from gunicorn.config import Config
from gunicorn.glogging import Logger, SafeAtoms
from rest_framework.test import APIClient

from calls.models import Recording


def _procfile_access_log_format() -> str:
    """The format of the project's gunicorn: gunicorn.conf.py's (which the Procfile's gunicorn reads), unless the
    Procfile overrides it on its command line."""
    web = next(line for line in (django_settings.BASE_DIR / "Procfile").read_text().splitlines()
               if line.startswith("web:"))
    words = shlex.split(web.removeprefix("web:"))
    if "--access-logformat" in words:
        return words[words.index("--access-logformat") + 1]
    return runpy.run_path(str(django_settings.BASE_DIR / "gunicorn.conf.py"))["access_log_format"]


def _access_log_line(url: str) -> str:
    """The line gunicorn writes for a GET of `url` under the Procfile's format."""
    parts = urlsplit(url)
    environ = {
        "REQUEST_METHOD": "GET", "RAW_URI": url.removeprefix(f"{parts.scheme}://{parts.netloc}"),
        "PATH_INFO": unquote(parts.path), "QUERY_STRING": parts.query, "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "203.0.113.7",
    }
    response = SimpleNamespace(status="200 OK", headers=[("X-Request-Id", "req_0123456789")], sent=1234)
    atoms = Logger(Config()).atoms(response, SimpleNamespace(headers=[]), environ, timedelta(milliseconds=12))
    return _procfile_access_log_format() % SafeAtoms(atoms)


def _token_of(url: str) -> str:
    """The signed token, wherever the URL carries it (the query string, or the path as links once did)."""
    parts = urlsplit(url)
    return parse_qs(parts.query).get("token", [unquote(parts.path.rsplit("/", 1)[-1])])[0]


def _minted_url(runtime, api) -> str:
    call_id, _ = runtime.start()
    assert runtime.complete(call_id, outcome="info").status_code == 200
    assert runtime.upload(call_id).status_code == 201
    return api.get(f"/v1/calls/{runtime.call(call_id).pk}/recording").json()["data"]["url"]


def test_the_recording_token_stays_out_of_the_access_log(runtime, api, settings):
    settings.BASE_URL = "http://testserver"
    url = _minted_url(runtime, api)
    token = _token_of(url)
    assert len(token) > 40
    line = _access_log_line(url)
    assert '"GET /recordings/" 200 1234B 12ms request_id=req_0123456789' in line
    assert token not in line


def test_no_django_log_line_holds_the_recording_token(runtime, api, settings, caplog):
    settings.BASE_URL = "http://testserver"
    url = _minted_url(runtime, api)
    token = _token_of(url)
    assert len(token) > 40
    client = APIClient()
    caplog.set_level(logging.DEBUG)
    assert client.get(url.removeprefix("http://testserver")).status_code == 200
    recording = Recording.objects.get()
    recording.file.delete(save=False)
    # Django logs every 4xx with its path ("Not Found: /recordings/"): a valid token must not be in it.
    assert client.get(url.removeprefix("http://testserver")).status_code == 404
    assert any(record.levelno >= logging.WARNING for record in caplog.records)
    assert not [record for record in caplog.records if token in record.getMessage()]
