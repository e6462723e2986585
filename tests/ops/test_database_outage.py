"""While PostgreSQL restarts or fails over, this node answers what it cannot serve with 503, `Retry-After` and the
API's error body, never a 500, and no write that answered 2xx is lost. PostgreSQL is reached by a live gunicorn
through a forwarder the test stops (open connections reset, new ones refused, as in a restart) and starts again."""

import http.client
import json
import threading
import time

import pytest

from contacts.models import Contact
from tests.support.database import database_url_through, server_address
from tests.support.gunicorn import running_gunicorn
from tests.support.tcp_proxy import TcpProxy
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.drill, pytest.mark.django_db(transaction=True)]

AREAS = (415, 212, 617, 312, 206, 303)
WRITERS = len(AREAS)
UNAVAILABLE = {"error": "service_unavailable"}


class Writers:
    """Threads that each create contacts one after another and keep every answer: (status, body, Retry-After)."""

    def __init__(self, port: int, plaintext: str):
        self.port, self.plaintext = port, plaintext
        self.answers: list[tuple[int, dict, str | None, float]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._write, args=(n,), daemon=True) for n in range(WRITERS)]

    def _write(self, writer: int) -> None:
        sequence = 0
        while not self._stop.is_set():
            sequence += 1
            phone = f"+1{AREAS[writer]}{200 + sequence // 10000}{sequence % 10000:04d}"  # one per write
            body = json.dumps({"phone_number": phone, "name": f"w{writer}-{sequence}"})
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            try:
                connection.request("POST", "/v1/contacts", body=body, headers={
                    "Authorization": f"Bearer {self.plaintext}", "Content-Type": "application/json"})
                response = connection.getresponse()
                answer = (response.status, json.loads(response.read() or b"null"), response.getheader("Retry-After"),
                          time.monotonic())
            finally:
                connection.close()
            with self._lock:
                self.answers.append(answer)

    def start(self) -> "Writers":
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(90)

    def count(self, status: int, since: float = 0.0) -> int:
        with self._lock:
            return sum(1 for answer in self.answers if answer[0] == status and answer[3] >= since)


def test_a_postgresql_restart_under_writes_answers_503_with_retry_after_never_500_and_loses_no_2xx_write(
    write_key, tmp_path
):
    _, plaintext = write_key
    proxy = TcpProxy(server_address()).start()
    env = {"DATABASE_URL": database_url_through("127.0.0.1", proxy.port), "WEB_WORKERS": "2",
           "RATE_LIMIT_WRITES_PER_MINUTE": "1000000", "RATE_LIMIT_ORG_WRITES_PER_MINUTE": "1000000"}
    try:
        with running_gunicorn(tmp_path / "gunicorn.log", **env) as port:
            writers = Writers(port, plaintext).start()
            try:
                wait_until(lambda: writers.count(201) >= 20, 60, "writes before the outage")
                proxy.stop()
                down_at = time.monotonic()
                # Down for at least 2.5 s (a restart) and until the writers have met it several times.
                wait_until(lambda: writers.count(503) >= 10 and time.monotonic() - down_at >= 2.5, 60,
                           lambda: f"503s during the outage: {writers.count(503)}")
                proxy.start()
                up_at = time.monotonic()
                wait_until(lambda: writers.count(201, since=up_at) >= 20, 60, "writes after the outage")
            finally:
                writers.stop()
    finally:
        proxy.stop()

    statuses = sorted({answer[0] for answer in writers.answers})
    assert statuses == [201, 503], statuses
    unavailable = [answer for answer in writers.answers if answer[0] == 503]
    assert all(body == UNAVAILABLE for _, body, _, _ in unavailable), unavailable[:3]
    assert all(retry_after is not None and int(retry_after) >= 1 for _, _, retry_after, _ in unavailable)
    created = [body["data"]["id"] for status, body, _, _ in writers.answers if status == 201]
    assert Contact.objects.filter(pk__in=created).count() == len(created)


def test_a_page_that_cannot_reach_postgresql_is_a_503_page_with_retry_after(admin_client, tmp_path):
    """The dashboard too: its session lives in PostgreSQL, read by a middleware, not a view."""
    proxy = TcpProxy(server_address()).start()
    cookie = admin_client.cookies["sessionid"].value
    try:
        with running_gunicorn(tmp_path / "gunicorn.log", DATABASE_URL=database_url_through("127.0.0.1", proxy.port)) \
                as port:
            def page():
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                connection.request("GET", "/calls/", headers={"Cookie": f"sessionid={cookie}"})
                response = connection.getresponse()
                response.read()
                return response.status, response.getheader("Retry-After"), response.getheader("Content-Type")

            assert page()[0] == 200
            proxy.stop()
            status, retry_after, content_type = page()
            assert (status, content_type.split(";")[0]) == (503, "text/html") and int(retry_after) >= 1
            proxy.start()
            assert wait_until(lambda: page()[0] == 200, 30, "the page back after the outage")
    finally:
        proxy.stop()
