"""gunicorn.conf.py, as any gunicorn started from the project root reads it: a URL over the service's documented
limit is a JSON 414 from the service (gunicorn's own HTML 414 only past 8,190 bytes), the access log writes
paths without their query strings, and a client that keeps its connection open does not keep the worker."""

import http.client
import json
import runpy
import socket
import time
from datetime import timedelta
from types import SimpleNamespace
from unittest.mock import patch

import pytest
from django.conf import settings
from gunicorn.config import Config
from gunicorn.glogging import Logger, SafeAtoms

from tests.support.gunicorn import running_gunicorn
from tests.support.waiting import wait_until
from voiceagent.gunicorn_logging import ScrubbingLogger

pytestmark = pytest.mark.django_db


def test_a_long_url_is_answered_in_json_by_the_app(client):
    response = client.get("/v1/calls", {"q": "x" * 5000})
    assert (response.status_code, response.json()) == (414, {"error": "uri_too_long"})
    assert client.get("/healthz?" + "a" * 4000).status_code == 200


@pytest.fixture
def gunicorn(tmp_path):
    with running_gunicorn(tmp_path / "gunicorn.log") as port:
        yield port, tmp_path / "gunicorn.log"


def _get(port, path):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, response.getheader("Content-Type"), response.read()


def test_the_project_gunicorn_lets_long_lines_reach_the_app_and_logs_no_query_string(gunicorn):
    port, log = gunicorn
    status, content_type, body = _get(port, "/healthz?token=" + "s3cret" * 900)  # about 5,400 bytes
    assert (status, content_type, json.loads(body)) == (414, "application/json", {"error": "uri_too_long"})
    assert _get(port, "/healthz?" + "a" * 9000)[0] == 414  # past gunicorn's own limit: its HTML answer

    def logged() -> str:
        text = log.read_text()
        return text if '"GET /healthz" 414' in text else ""

    assert "s3cret" not in wait_until(logged, 10, "the access log's line of the 414")


def _request(port: int, head: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(head.encode())
    return sock


def _response(sock: socket.socket) -> bytes:
    """Everything the server sent until it closed its side."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def test_a_client_that_keeps_its_connection_open_does_not_keep_the_worker(tmp_path):
    """On one sync worker, a client reads its answer and neither closes nor sends: the next client is answered at
    once. With gunicorn's own close the worker waited 2 s for each such client, so a few of them (an organization's
    refused requests included) took every worker from everyone else."""
    with running_gunicorn(tmp_path / "gunicorn.log", WEB_WORKERS="1") as port:
        assert _get(port, "/healthz")[0] == 200  # the worker is up
        for _ in range(3):
            idle = _request(port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert _response(idle).startswith(b"HTTP/1.1 200 ")  # read, then kept open
            started = time.monotonic()
            assert _get(port, "/healthz")[0] == 200
            assert time.monotonic() - started < 1.0
            idle.close()


def test_a_client_still_sending_its_body_gets_the_whole_answer(tmp_path):
    """gunicorn's reason to linger holds: a request answered before its body was read (401: no key) while the client
    is still sending it ends in the client's close, not a reset that cuts the answer."""
    with running_gunicorn(tmp_path / "gunicorn.log", WEB_WORKERS="1") as port:
        size = 48 * 1024
        sock = _request(port, f"POST /v1/contacts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                              f"Content-Length: {size}\r\n\r\n")
        for _ in range(size // 1024):  # the answer comes while the body is still on its way
            sock.sendall(b" " * 1024)
            time.sleep(0.01)
        sock.shutdown(socket.SHUT_WR)
        answer = _response(sock)
        sock.close()
    assert answer.startswith(b"HTTP/1.1 401 "), answer[:300]
    assert answer.endswith(b"\r\n\r\n" + json.dumps({"error": "unauthorized"}, separators=(",", ":")).encode())


ACCESS_FORMATS = [
    runpy.run_path(str(settings.BASE_DIR / "gunicorn.conf.py"))["access_log_format"],
    Config().access_log_format,  # gunicorn's default
    '%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s" %(T)s %(D)s %(M)s %(L)s %(p)s %(q)s %(H)s %(B)s',
    "%(U)s %({X-Request-Id}o)s %({user-agent}i)s %({Accept}I)s %({x-forwarded-for}i)s %({raw_uri}e)s %(nope)s",
]


@pytest.mark.parametrize("access_format", ACCESS_FORMATS)
def test_the_access_line_is_the_one_gunicorn_writes(access_format):
    """The project's logger builds only the atoms its format names (voiceagent/gunicorn_logging.py); every line is
    gunicorn's own, whatever the format, with the scrubbing applied after as before."""
    cfg = Config()
    cfg.set("access_log_format", access_format)
    environ = {
        "REQUEST_METHOD": "GET", "RAW_URI": "/v1/me?x=1", "PATH_INFO": "/v1/me", "QUERY_STRING": "x=1",
        "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "203.0.113.7", "HTTP_USER_AGENT": 'curl "8"',
        "HTTP_AUTHORIZATION": "Bearer secret", "HTTP_COOKIE": "a=b",
    }
    response = SimpleNamespace(status="200 OK", headers=[("Content-Type", "application/json"),
                                                          ("X-Request-Id", "req_0123456789")], sent=1234)
    request = SimpleNamespace(headers=[("USER-AGENT", 'curl "8"'), ("X-FORWARDED-FOR", "198.51.100.1"),
                                       ("ACCEPT", "*/*")])
    elapsed = timedelta(seconds=1, microseconds=2345)

    def line(logger_class):
        atoms = logger_class(cfg).atoms(response, request, environ, elapsed)
        return access_format % SafeAtoms(atoms)

    with patch.object(Logger, "now", return_value="[01/Jan/2026:00:00:00 +0000]"):
        assert line(ScrubbingLogger) == line(Logger)
