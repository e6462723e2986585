"""LOG_FORMAT=json: one JSON object per line with the request's fields, for every process that loads the settings
(web, worker, beat); and never a key, a webhook secret, a bearer token or a recording token, in either format."""

import json
import logging
import os
import subprocess
import sys

import pytest
from django.conf import settings as django_settings

from voiceagent.logging import JsonFormatter, RequestIdFilter, ScrubFilter

KEY = "va_live_" + "Ab3dE" * 6 + "xy"
SECRET = "whsec_" + "A" * 43 + "="


def _format(record: logging.LogRecord) -> dict:
    for f in (RequestIdFilter(), ScrubFilter()):
        f.filter(record)
    return json.loads(JsonFormatter().format(record))


def test_a_json_line_carries_the_fields_and_no_secret():
    record = logging.LogRecord("voiceagent.request", logging.INFO, __file__, 1, "key %s secret %s auth %s url %s",
                               (KEY, SECRET, f"Bearer {KEY}", "/recordings/?token=abc.def"), None)
    record.route, record.status, record.duration_ms, record.org_id = "v1/calls", 200, 3.2, "org-1"
    line = _format(record)
    assert set(line) >= {"time", "level", "logger", "message", "request_id", "route", "status", "duration_ms",
                         "org_id"}
    assert (line["level"], line["logger"], line["route"], line["status"]) == ("INFO", "voiceagent.request",
                                                                              "v1/calls", 200)
    text = json.dumps(line)
    for secret in (KEY, SECRET, "abc.def"):
        assert secret not in text
    assert line["time"].endswith("Z")


def test_an_exception_is_scrubbed_too():
    try:
        raise RuntimeError(f"failed with {KEY}")
    except RuntimeError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "boom", (), sys.exc_info())
    line = _format(record)
    assert "RuntimeError" in line["exception"] and KEY not in line["exception"]


@pytest.mark.django_db
def test_each_api_request_logs_one_line_with_route_status_org_and_key_prefix(api, write_key, settings, caplog):
    settings.LOG_REQUESTS = True
    with caplog.at_level(logging.INFO, logger="voiceagent.request"):
        assert api.get("/v1/calls").status_code == 200
    [record] = [r for r in caplog.records if r.name == "voiceagent.request"]
    line = _format(record)
    key = write_key[0]
    assert (line["route"], line["status"], line["method"]) == ("v1/calls", 200, "GET")
    assert (line["org_id"], line["key_prefix"]) == (str(key.organization_id), key.key_prefix)
    assert write_key[1] not in json.dumps(line)


def test_the_worker_and_beat_processes_log_json_lines(tmp_path):
    """Any process loading the settings (celery worker and beat do) writes JSON with LOG_FORMAT=json."""
    script = (
        "import django, logging; django.setup();"
        f"logging.getLogger('celery.worker').warning('delivered with Bearer {KEY}')"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "voiceagent.test_settings", "LOG_FORMAT": "json"}
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=django_settings.BASE_DIR,
                          capture_output=True, text=True, timeout=60, check=True)
    [line] = [json.loads(text) for text in done.stderr.splitlines() if text.startswith("{")]
    assert line["logger"] == "celery.worker" and line["level"] == "WARNING"
    assert KEY not in done.stderr and "Bearer [redacted]" in line["message"]


@pytest.mark.parametrize("text", [
    f"GET /v1/me {KEY} done", f"secret {SECRET}", "Authorization: BEARER abc.def", "bearer\tabc",
    "/x?ToKeN=abc&a=1", "/x?a=1&X-AMZ-CREDENTIAL=abc/2026", "/x?X-Amz-Signature=ff00", "/recordings/abc/play",
    "/invitations/12/s3cret/", "/password-reset/MQ/abc-123/", "/password-reset/MQ/set-password/",
    "/x?\u017fignature=abc", "/x?to\u212aen=abc", "\u0130 /recordings/abc", '127.0.0.1 "GET /v1/me" 200 123B 2ms',
    "nothing here at all", "",
])
def test_scrub_answers_as_every_pattern_would(text):
    """scrub skips its substitutions for ASCII text with none of their markers (core/redaction.py): whatever the
    case or the letters, it answers exactly as running every pattern does."""
    from core.redaction import _SECRETS, scrub

    expected = text
    for pattern, replacement in _SECRETS:
        expected = pattern.sub(replacement, expected)
    assert scrub(text) == expected
