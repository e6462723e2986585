"""Bodies without a Content-Length (chunked) under gunicorn, as production serves them: applied, or 413."""

import http.client
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge.models import Fact
from knowledge.services import fact_create
from tests.support.celery_worker import test_database_url as database_url_for_subprocess
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def gunicorn(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "voiceagent.test_settings",
        "DATABASE_URL": database_url_for_subprocess(),
        "PYTEST_XDIST_WORKER": os.environ.get("PYTEST_XDIST_WORKER", "gw0"),
    }
    log = tmp_path / "gunicorn.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "voiceagent.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    def answers() -> bool:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/v1/me")
            conn.getresponse().read()  # any answer: Django is loaded
            return True
        except OSError:
            return False

    wait_until(answers, 60, lambda: f"gunicorn answering:\n{log.read_text()[-3000:]}", interval=0.2)
    yield port
    server.terminate()
    server.wait(timeout=10)


def send_chunked(port: int, method: str, path: str, key: str, body: bytes, chunk: int = 65536):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.putrequest(method, path)
    conn.putheader("Authorization", f"Bearer {key}")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Transfer-Encoding", "chunked")
    conn.endheaders()
    try:
        for start in range(0, len(body), chunk):
            part = body[start:start + chunk]
            conn.send(f"{len(part):x}\r\n".encode() + part + b"\r\n")
        conn.send(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server may answer 413 and close before the client has sent everything
    response = conn.getresponse()
    assert response.getheader("X-Request-Id")
    return response.status, json.loads(response.read() or b"null")


@pytest.mark.django_db(transaction=True)
def test_a_chunked_patch_is_applied(gunicorn, org, write_key):
    fact = fact_create(org=org, label="Hours", content="9-5")
    status, body = send_chunked(gunicorn, "PATCH", f"/v1/facts/{fact.id}", write_key[1], b'{"content": "8-6"}')
    assert status == 200
    assert body["data"]["content"] == "8-6"
    fact.refresh_from_db()
    assert fact.content == "8-6"


@pytest.mark.django_db(transaction=True)
def test_a_chunked_body_over_the_limit_is_413_and_writes_nothing(gunicorn, org, write_key):
    body = json.dumps({"label": "Big", "content": "x" * 4_718_592}).encode()
    status, answer = send_chunked(gunicorn, "POST", "/v1/facts", write_key[1], body)
    assert (status, answer) == (413, {"error": "payload_too_large"})
    assert not Fact.objects.filter(label="Big").exists()
