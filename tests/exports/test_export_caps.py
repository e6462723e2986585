"""CSV exports never hold the web tier: a download holds a sync web worker for as long as it lasts, so it needs a
place in two semaphores every process shares through Redis, its organization's (1 at a time) and everyone's (one
web worker in four). Over either: 429 `rate_limited` with Retry-After on the API, a message on the dashboard, and
nothing queried. Places are given back when the download ends however it ends, and expire when it stops making
progress."""

import http.client
import socket
import threading
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from contacts.models import Contact
from core import counters
from core.csvexport import Column, ExportsBusy, csv_response, export_slots, exports_at_once, take_places
from tests.factories import OrganizationFactory, make_key
from tests.support.gunicorn import running_gunicorn

pytestmark = pytest.mark.django_db

RATE_LIMITED = {"error": "rate_limited"}
# A test that closes a response itself (as the server does when a client goes away) lets its request_finished close
# the database connection: its rows must be committed, not in the test's own transaction.
CLOSES = pytest.mark.django_db(transaction=True)


def _client(org, scope="read") -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(org, scope=scope)[1]}")
    return client


def _contacts(org, n, *, notes=""):
    Contact.objects.bulk_create(
        Contact(organization=org, phone_number=f"+1415555{i:04d}", phone_digits=f"1415555{i:04d}", name=f"Name {i}",
                notes=notes or None, source="api")
        for i in range(n)
    )


def _held(org) -> bool:
    """Whether `org` has no export place free now (taking one, and giving it back at once, tells)."""
    try:
        take_places(org.pk).release()
    except ExportsBusy:
        return True
    return False


def _open(client, kind="contacts"):
    """An export whose download has started (its first chunk read) and is still open, as a slow client's is."""
    response = client.get(f"/v1/exports/{kind}.csv")
    assert response.status_code == 200, response.content
    content = iter(response.streaming_content)
    assert next(content).startswith(b"id,")
    return response


def _read(response) -> bytes:
    """The whole download (the test client then closes it, ending its transaction and giving its places back)."""
    assert response.status_code == 200, response.content
    return b"".join(response.streaming_content)


def _assert_refused(response, most: int = 10):
    assert response.status_code == 429
    assert response.json() == RATE_LIMITED
    assert 1 <= int(response["Retry-After"]) <= most


@CLOSES
def test_one_export_at_a_time_per_organization_and_another_org_is_not_affected(org, other_org, settings):
    settings.WEB_WORKERS = 40  # 10 overall: only the organization's cap applies
    _contacts(org, 3)
    _contacts(other_org, 3)
    theirs, ours = _client(other_org), _client(org)
    holding = _open(theirs)
    try:
        with CaptureQueriesContext(connection) as queries:
            second = theirs.get("/v1/exports/contacts.csv")
        _assert_refused(second)
        assert not [q for q in queries.captured_queries if "contacts_contact" in q["sql"]]  # nothing queried
        # Another kind is still the same organization's one place.
        _assert_refused(theirs.get("/v1/exports/calls.csv"))
        # The per-organization cap isolates: our export runs while theirs is held.
        assert len(_read(ours.get("/v1/exports/contacts.csv")).decode().splitlines()) == 4
    finally:
        holding.close()
    _read(theirs.get("/v1/exports/contacts.csv"))  # given back when closed


def test_the_per_organization_cap_is_a_setting(org, settings):
    settings.EXPORTS_PER_ORG_AT_ONCE = 2
    settings.WEB_WORKERS = 40
    client = _client(org)
    first = take_places(org.pk)  # a download of the organization, in another process
    try:
        _read(client.get("/v1/exports/contacts.csv"))
        second = take_places(org.pk)
        try:
            _assert_refused(client.get("/v1/exports/contacts.csv"))
        finally:
            second.release()
    finally:
        first.release()


@pytest.mark.parametrize(("workers", "cap"), [(1, 1), (4, 1), (7, 1), (8, 2), (17, 4)])
def test_one_web_worker_in_four_at_least_one(settings, workers, cap):
    settings.WEB_WORKERS = workers
    assert exports_at_once() == cap


def test_at_most_one_web_worker_in_four_exports_overall(org, settings):
    settings.WEB_WORKERS = 8  # 2 at once overall
    # Downloads of two other organizations, in other processes.
    held = [take_places(OrganizationFactory(name=f"Tenant {i}").pk) for i in range(2)]
    client = _client(org)
    try:
        with CaptureQueriesContext(connection) as queries:
            refused = client.get("/v1/exports/contacts.csv")
        _assert_refused(refused)
        assert not [q for q in queries.captured_queries if "contacts_contact" in q["sql"]]
        held.pop().release()
        _read(client.get("/v1/exports/contacts.csv"))  # a place came free
    finally:
        for places in held:
            places.release()


def test_places_are_given_back_when_the_download_is_read_to_its_end(org):
    _contacts(org, 5)
    response = _client(org).get("/v1/exports/contacts.csv")
    chunks = iter(response.streaming_content)
    next(chunks)
    assert _held(org)
    rest = list(chunks)  # the test client closes the response after its last chunk, as a server does
    assert len(b"".join(rest).decode().splitlines()) == 4
    assert not _held(org)


@CLOSES
def test_places_are_given_back_when_the_client_goes_away_mid_download(org):
    _contacts(org, 5)
    response = _open(_client(org))
    assert _held(org)
    response.close()  # what the server does when the client disconnects
    assert not _held(org)


@CLOSES
def test_places_are_given_back_when_the_response_is_never_read(org):
    response = _client(org).get("/v1/exports/contacts.csv")
    assert response.status_code == 200 and _held(org)
    response.close()
    assert not _held(org)


def test_places_are_given_back_when_the_query_fails(org):
    broken = Contact.objects.for_org(org).extra(where=["1/0 = 1"])  # noqa: S610 - constant SQL
    with pytest.raises(Exception, match="division by zero"):
        csv_response(broken, [Column("name")], org=org, filename="x.csv")
    assert not _held(org)


def test_head_takes_and_gives_back_a_place(org):
    response = _client(org).head("/v1/exports/contacts.csv")
    assert response.status_code == 200 and _held(org)
    assert b"".join(response.streaming_content) == b""  # the server sends no body, then closes the response
    assert not _held(org)


@pytest.mark.django_db(transaction=True)
def test_a_progressing_download_keeps_its_place_past_the_ttl_and_a_stuck_one_loses_it(org, settings):
    settings.EXPORT_PLACE_TTL_SECONDS = 0.9  # renewed at most every 0.3 s
    _contacts(org, 2000 * 8)  # 8 chunks
    response = csv_response(Contact.objects.for_org(org).order_by("phone_number"), [Column("name")], org=org,
                            filename="x.csv")
    chunks = iter(response.streaming_content)
    try:
        started = time.monotonic()
        for _ in range(6):  # a slow but steady client: 2 s in all, more than twice the TTL
            next(chunks)
            time.sleep(0.35)
            assert _held(org), f"lost its place after {time.monotonic() - started:.1f} s"
        time.sleep(1.5)  # the client stops reading: no progress, no renewal
        assert not _held(org)
    finally:
        response.close()


def test_renewing_a_place_that_already_expired_does_not_take_it_back(org):
    names = [name for name, _ in export_slots(org.pk)]
    holder = counters.take_slots(export_slots(org.pk), ttl=0.2)
    assert counters.renew_slots(names, holder, ttl=0.2)
    time.sleep(0.4)
    assert not counters.renew_slots(names, holder, ttl=30)
    assert not _held(org)


def test_without_redis_exports_are_refused_and_nothing_is_queried(org, monkeypatch):
    """No process can count the shared places alone: 429, Retry-After 1."""
    client = _client(org)
    monkeypatch.setattr(counters, "_down_until", time.monotonic() + 60)
    try:
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/v1/exports/contacts.csv")
    finally:
        counters.reset()
    assert (response.status_code, response.json(), response["Retry-After"]) == (429, RATE_LIMITED, "1")
    assert not [q for q in queries.captured_queries if "contacts_contact" in q["sql"]]
    _read(client.get("/v1/exports/contacts.csv"))  # Redis back: exports run again


@pytest.mark.parametrize(("url", "back"), [
    ("/calls/export.csv?booked=yes", "/calls/?booked=yes"),
    ("/contacts/export.csv?q=555", "/contacts/?q=555"),
    ("/bookings/export.csv", "/bookings/"),
    ("/inbox/callback/export.csv?show=all", "/inbox/?show=all"),
    ("/settings/audit-log/export.csv", "/settings/audit-log/"),
])
def test_the_dashboard_buttons_over_the_cap_go_back_with_a_message(admin_client, org, url, back):
    places = take_places(org.pk)  # another download of the organization, in another process
    try:
        response = admin_client.get(url)
        assert (response.status_code, response["Location"]) == (302, back)
        page = admin_client.get(back)
        assert page.status_code == 200
        assert "An export of your organization is running: try again in " in page.content.decode()
    finally:
        places.release()
    _read(admin_client.get(url))


def test_the_dashboard_says_when_everyone_is_exporting(admin_client, org, settings):
    settings.WEB_WORKERS = 4
    places = take_places(OrganizationFactory().pk)
    try:
        page = admin_client.get("/contacts/export.csv", follow=True)
    finally:
        places.release()
    assert page.status_code == 200
    assert "Too many exports are running right now: try again in " in page.content.decode()


def _slow_export(port: int, key: str) -> tuple[int, socket.socket]:
    """Starts an export and reads only its status line, then holds the connection without reading (a client that
    stalls): the status and the socket, still open."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(30)
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET /v1/exports/contacts.csv HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
                 "Connection: close\r\n\r\n".encode())
    status = int(sock.recv(64).split(b" ", 2)[1])
    return status, sock


def _me(port: int, key: str) -> tuple[int, float]:
    connection_ = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    started = time.monotonic()
    connection_.request("GET", "/v1/me", headers={"Authorization": f"Bearer {key}"})
    response = connection_.getresponse()
    response.read()
    connection_.close()
    return response.status, time.monotonic() - started


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_one_tenant_holding_slow_exports_does_not_slow_another(org, other_org, tmp_path):
    """Org B opens export after export and stalls each one (reads its status line, then nothing) on a gunicorn of
    4 workers; org A's /v1/me is answered every time, promptly. Without the caps B's first four stalled downloads
    held every worker (each far larger than the socket buffers) and A waited until WEB_TIMEOUT killed them."""
    _, key_a = make_key(org, scope="read")
    _, key_b = make_key(other_org, scope="read")
    _contacts(other_org, 6000, notes="n" * 4000)  # about 24 MB of CSV: a stalled download blocks its worker
    with running_gunicorn(tmp_path / "gunicorn.log", WEB_WORKERS="4", WEB_GRACEFUL_TIMEOUT="5") as port:
        assert _me(port, key_a)[0] == 200
        stop = threading.Event()
        opened: list[int] = []
        sockets: list[socket.socket] = []

        def stall():
            while not stop.is_set():
                status, sock = _slow_export(port, key_b)
                opened.append(status)
                sockets.append(sock)
                stop.wait(0.3)

        threads = [threading.Thread(target=stall) for _ in range(6)]
        for thread in threads:
            thread.start()
        try:
            answers = []
            until = time.monotonic() + 8
            while time.monotonic() < until:
                answers.append(_me(port, key_a))
                time.sleep(0.05)
        finally:
            stop.set()
            for thread in threads:
                thread.join(30)
            for sock in sockets:
                sock.close()
    assert {status for status, _ in answers} == {200}
    assert max(elapsed for _, elapsed in answers) < 4.0, sorted(elapsed for _, elapsed in answers)[-5:]
    # B held its one place all along (its first download stalls past the test), every other export refused.
    assert opened.count(200) == 1 and set(opened) == {200, 429}, opened
