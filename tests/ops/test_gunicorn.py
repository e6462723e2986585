"""gunicorn.conf.py, as any gunicorn started from the project root reads it: a URL over the service's documented
limit is a JSON 414 from the service (gunicorn's own HTML 414 only past 8,190 bytes), and the access log writes
paths without their query strings."""

import http.client
import json

import pytest

from tests.support.gunicorn import running_gunicorn
from tests.support.waiting import wait_until

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
