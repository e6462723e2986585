"""Invitation and password-reset links carry their token in the path, so every log that writes a path redacts it:
our own lines and Django's request warnings (plain and JSON, through the project's real console handler), and
gunicorn's access log (a live gunicorn started as an operator would, gunicorn.conf.py and all)."""

import http.client
import io
import json
import logging
from contextlib import contextmanager

import pytest
from django.contrib.auth.tokens import default_token_generator
from django.test import Client
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from orgs.invitations import invitation_create, token_for
from tests.support.gunicorn import running_gunicorn
from voiceagent.logging import JsonFormatter


def _links(org, admin) -> tuple[dict, str, str]:
    """The two links' paths (their tokens) and the tokens."""
    invitation = invitation_create(org=org, by=admin, email="new.hire@example.com", role="member")
    invitation_token = token_for(invitation.pk, invitation.nonce)
    reset_token = default_token_generator.make_token(admin)
    uid = urlsafe_base64_encode(force_bytes(admin.pk))
    paths = {"invitation": f"/invitations/{invitation.pk}/{invitation_token}/",
             "reset": f"/password-reset/{uid}/{reset_token}/"}
    assert len(invitation_token) == 64 and len(reset_token) > 30
    return paths, invitation_token, reset_token


@contextmanager
def _console(fmt: str):
    """What the project's console handler (settings.LOGGING: its filters, and the plain or the JSON formatter) writes
    while the block runs."""
    handler = next(h for h in logging.getLogger().handlers if h.name == "console")
    buffer = io.StringIO()
    previous_stream, previous_formatter = handler.setStream(buffer), handler.formatter
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    try:
        yield buffer
    finally:
        handler.setStream(previous_stream)
        handler.setFormatter(previous_formatter)


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", ["plain", "json"])
def test_no_log_line_holds_an_invitation_or_reset_token(org, admin, settings, fmt):
    settings.LOG_REQUESTS = True
    paths, *tokens = _links(org, admin)
    with _console(fmt) as output:
        assert Client().get(paths["invitation"]).status_code == 200
        assert Client().post(paths["invitation"], {"password": "x"}).status_code == 400  # "Bad Request: <path>"
        assert Client().get(paths["reset"]).status_code == 302
        strict = Client(enforce_csrf_checks=True)
        for path in paths.values():
            assert strict.post(path, {}).status_code == 403  # "Forbidden (CSRF cookie not set.): <path>"
        assert Client().get(paths["invitation"].replace(tokens[0], tokens[0][::-1])).status_code == 404
    text = output.getvalue()
    lines = text.splitlines()
    if fmt == "json":
        assert all(json.loads(line) for line in lines)
    assert "Bad Request: /invitations/" in text and "Forbidden (CSRF cookie not set.): /password-reset/" in text
    assert "[redacted]" in text
    for token in (*tokens, tokens[0][::-1]):
        assert token not in text


@pytest.mark.django_db(transaction=True)
def test_gunicorns_access_log_holds_no_invitation_or_reset_token(org, admin, tmp_path):
    paths, *tokens = _links(org, admin)
    log_path = tmp_path / "gunicorn.log"
    with running_gunicorn(log_path) as port:
        for path in (*paths.values(), paths["reset"].replace("/password-reset/", "/password-reset/x")):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            connection.request("GET", path)
            connection.getresponse().read()
            connection.close()
    log = log_path.read_text()
    invitation_id = paths["invitation"].split("/")[2]
    assert f'"GET /invitations/{invitation_id}/[redacted]/" 200' in log
    assert '"GET /password-reset/' in log and "/[redacted]/\" 302" in log
    for token in tokens:
        assert token not in log
