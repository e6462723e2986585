"""transport.post against real loopback servers: TLS to the pinned address under the URL's name, the time budget,
how failures are named, what is kept of a reply, keep-alive reuse only for the same vetted address, and refusals
before any connection. Servers are threads in this process speaking raw sockets, so each misbehaviour is exact."""

import contextlib
import socket
import ssl
import struct
import threading

import pytest
import trustme

from tests.support.waiting import wait_until
from webhooks import conf, transport

BODY = b'{"type":"call.ended"}'
HEADERS = {"Content-Type": "application/json", "User-Agent": transport.USER_AGENT}


def read_request(conn) -> dict | None:
    """One HTTP/1.1 request (head and Content-Length body) from `conn`; None when the client closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    request_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    while len(body) < int(headers.get("content-length", 0)):
        chunk = conn.recv(65536)
        if not chunk:
            return None
        body += chunk
    method, path, _ = request_line.split(" ", 2)
    return {"method": method, "path": path, "headers": headers, "body": body}


def reply(status: int, body: bytes = b"ok", headers: dict | None = None) -> bytes:
    head = f"HTTP/1.1 {status} Whatever\r\nContent-Length: {len(body)}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    return head.encode() + b"\r\n" + body


class LoopbackServer:
    """A TCP (optionally TLS) server on a loopback address. Each accepted connection runs `handle(server, conn)` in
    its own thread; `peers` lists accepted clients, `requests` collects what handlers read, `sni` the names clients
    sent in their TLS hello."""

    def __init__(self, handle, host="127.0.0.1", port=0, tls: ssl.SSLContext | None = None):
        self.handle, self.tls = handle, tls
        self.peers: list[tuple] = []  # client addresses, in the order accepted
        self.requests: list[dict] = []
        self.sni: list[str | None] = []
        self.stopped = threading.Event()
        self._open: list[socket.socket] = []
        self.listener = socket.create_server((host, port))
        self.listener.settimeout(0.05)  # the accept loop polls `stopped`
        self.host, self.port = self.listener.getsockname()[:2]
        if tls is not None:
            tls.sni_callback = lambda sslobj, name, ctx: self.sni.append(name)
        threading.Thread(target=self._accept_loop, daemon=True).start()

    def _accept_loop(self):
        while not self.stopped.is_set():
            try:
                conn, peer = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            self.peers.append(peer)
            self._open.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
                self._open.append(conn)
            self.handle(self, conn)
        except OSError:
            pass  # the client gave up (a failed handshake, a timeout): that is what several tests provoke

    @property
    def connections(self) -> int:
        return len(self.peers)

    def close(self):
        self.stopped.set()
        self.listener.close()
        for conn in self._open:
            with contextlib.suppress(OSError):
                conn.close()


def answer(status=200, body=b"ok", headers=None):
    """A keep-alive HTTP/1.1 handler giving every request the same reply."""

    def handle(server, conn):
        while (request := read_request(conn)) is not None:
            server.requests.append(request)
            conn.sendall(reply(status, body, headers))

    return handle


def read_then_hang(server, conn):
    server.requests.append(read_request(conn))
    server.stopped.wait()


@pytest.fixture
def serve():
    """Start LoopbackServers; all are closed at teardown (which also ends any handler still dribbling or hanging)."""
    servers = []

    def start(handle, **kwargs):
        servers.append(LoopbackServer(handle, **kwargs))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def short_budget(monkeypatch):
    """A 0.5 s total budget so timeout tests take half a second, not fifteen."""
    monkeypatch.setattr(conf, "TOTAL_TIMEOUT", 0.5)
    monkeypatch.setattr(conf, "CONNECT_TIMEOUT", 0.5)
    return 0.5


def post_within(url: str, limit: float) -> transport.Outcome:
    """post() in a thread, failing the test (instead of hanging it) when it has not returned within `limit` s."""
    result = []
    thread = threading.Thread(target=lambda: result.append(transport.post(url, BODY, HEADERS)), daemon=True)
    thread.start()
    thread.join(limit)
    assert result, f"post() still running after {limit} s"
    return result[0]


# --- TLS -------------------------------------------------------------------------------------------------------


@pytest.fixture
def ca():
    return trustme.CA()


@pytest.fixture
def trusted_ca(ca, tmp_path, settings):
    """WEBHOOK_CA_BUNDLE names this CA (a new bundle path, so transport builds a new pool manager for it)."""
    path = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    settings.WEBHOOK_CA_BUNDLE = str(path)
    return ca


def tls_context(ca: trustme.CA, name: str) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(name).configure_cert(context)
    return context


def test_https_connects_to_the_pinned_address_under_the_urls_name(serve, fake_dns, allow_local, trusted_ca):
    """requests-hardened's pinning: the socket goes to the vetted IP, while SNI, Host and the certificate check all
    use the URL's hostname, so ordinary name-based certificates and virtual hosts keep working."""
    server = serve(answer(200), tls=tls_context(trusted_ca, "hooks.test"))
    fake_dns.answers["hooks.test"] = ["127.0.0.1"]

    outcome = transport.post(f"https://hooks.test:{server.port}/in?x=1", BODY, HEADERS)

    assert (outcome.status_code, outcome.error, outcome.body) == (200, "", "ok")
    assert server.sni == ["hooks.test"]
    [request] = server.requests
    assert request["method"] == "POST" and request["path"] == "/in?x=1"
    assert request["headers"]["host"] == f"hooks.test:{server.port}"
    assert request["body"] == BODY


def test_a_certificate_not_signed_by_the_configured_bundle_fails_as_an_ssl_error(serve, fake_dns, allow_local, ca):
    """Without WEBHOOK_CA_BUNDLE only certifi's public CAs are trusted: a private CA's certificate is refused."""
    server = serve(answer(200), tls=tls_context(ca, "hooks.test"))
    fake_dns.answers["hooks.test"] = ["127.0.0.1"]

    outcome = transport.post(f"https://hooks.test:{server.port}/in", BODY, HEADERS)

    assert outcome.status_code is None
    assert outcome.error.startswith("SSLError: ") and "certificate verify failed" in outcome.error
    assert server.requests == []


@pytest.mark.parametrize("cert_name", ["other.test", "127.0.0.1"])
def test_the_certificate_must_name_the_urls_host_not_the_pinned_address(
    serve, fake_dns, allow_local, trusted_ca, cert_name
):
    """A trusted certificate for another name, or for the very IP we connect to, is a mismatch: the check is made
    against the URL's hostname, otherwise pinning would let any certificate for the address through."""
    server = serve(answer(200), tls=tls_context(trusted_ca, cert_name))
    fake_dns.answers["hooks.test"] = ["127.0.0.1"]

    outcome = transport.post(f"https://hooks.test:{server.port}/in", BODY, HEADERS)

    assert outcome.status_code is None
    assert outcome.error.startswith("SSLError: ") and "hooks.test" in outcome.error and "match" in outcome.error
    assert server.requests == []


# --- Time budget -----------------------------------------------------------------------------------------------


def test_a_receiver_that_never_answers_times_out(serve, allow_local, short_budget):
    server = serve(read_then_hang)

    outcome = post_within(f"http://127.0.0.1:{server.port}/hook", short_budget + 2)

    assert outcome.status_code is None and outcome.error.startswith("Timeout")
    assert outcome.duration_ms >= short_budget * 1000 - 100
    assert len(server.requests) == 1


def dribble_body(server, conn):
    read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
    while not server.stopped.wait(0.1):
        conn.sendall(b"x")


def dribble_head(server, conn):
    read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    while not server.stopped.wait(0.1):
        conn.sendall(b"X")


@pytest.mark.parametrize("handle", [dribble_body, dribble_head], ids=["body", "headers"])
def test_a_receiver_that_dribbles_its_reply_is_cut_off_at_the_total_budget(serve, allow_local, short_budget, handle):
    """Each byte arrives well within the read timeout, so only the total budget (15 s in production) can stop it;
    otherwise one slow receiver holds a send thread, and the delivery's lease, indefinitely."""
    server = serve(handle)

    outcome = post_within(f"http://127.0.0.1:{server.port}/hook", short_budget + 1.5)

    assert outcome.status_code is None and outcome.error.startswith("Timeout")
    assert outcome.duration_ms <= (short_budget + 0.5) * 1000


# --- Connection failures ---------------------------------------------------------------------------------------


def reset_after_request(server, conn):
    server.requests.append(read_request(conn))
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close() sends RST
    conn.close()


def test_a_reset_connection_is_a_connection_error(serve, allow_local):
    server = serve(reset_after_request)

    outcome = transport.post(f"http://127.0.0.1:{server.port}/hook", BODY, HEADERS)

    assert outcome.status_code is None and outcome.error.startswith("ConnectionError: ")
    assert len(server.requests) == 1


def test_a_refused_connection_is_a_connection_error_not_a_timeout(allow_local):
    """Refused is immediate and says nobody listens there; calling it a timeout sends the subscriber hunting for a
    slow network. (urllib3's NewConnectionError subclasses ConnectTimeoutError, which makes this easy to get wrong.)"""
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]  # closed on leaving: nothing listens there any more

    outcome = transport.post(f"http://127.0.0.1:{port}/hook", BODY, HEADERS)

    assert outcome.status_code is None
    assert outcome.error.startswith("ConnectionError: "), outcome.error
    assert "refused" in outcome.error.lower()


# --- What is kept of a reply -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("status", "error"), [(200, ""), (500, "HTTP 500")])
def test_the_first_2_kb_of_the_body_are_kept_as_text_with_the_status(serve, allow_local, status, error):
    """The attempt log keeps the first 2 KB (docs/api.md#webhook-delivery); bytes that are not UTF-8 must not fail
    the attempt."""
    body = b"bad \xff\xfe utf-8 " + b"x" * 10_000
    server = serve(answer(status, body))

    outcome = transport.post(f"http://127.0.0.1:{server.port}/hook", BODY, HEADERS)

    assert (outcome.status_code, outcome.error) == (status, error)
    assert outcome.body == body[: conf.RESPONSE_KEEP_BYTES].decode("utf-8", "replace")
    assert outcome.body.startswith("bad \ufffd\ufffd utf-8 ")
    assert conf.RESPONSE_KEEP_BYTES == 2048


def test_a_503_with_retry_after_reports_the_wait(serve, allow_local):
    server = serve(answer(503, b"busy", {"Retry-After": "7"}))

    outcome = transport.post(f"http://127.0.0.1:{server.port}/hook", BODY, HEADERS)

    assert (outcome.status_code, outcome.error, outcome.retry_after, outcome.body) == (503, "HTTP 503", 7.0, "busy")


def test_a_redirect_is_a_failure_and_its_location_is_not_fetched(serve, allow_local):
    """A redirect could lead anywhere, past the address vetting: it is reported, never followed."""
    elsewhere = serve(answer(200))
    server = serve(answer(301, b"", {"Location": f"http://127.0.0.1:{elsewhere.port}/elsewhere"}))

    outcome = transport.post(f"http://127.0.0.1:{server.port}/hook", BODY, HEADERS)

    assert (outcome.status_code, outcome.error) == (301, "Redirect not followed")
    assert len(server.requests) == 1
    assert elsewhere.connections == 0


# --- Connection reuse ------------------------------------------------------------------------------------------


def test_sequential_posts_to_one_receiver_reuse_one_keep_alive_connection(serve, allow_local):
    server = serve(answer(200))

    outcomes = [transport.post(f"http://127.0.0.1:{server.port}/hook", BODY, HEADERS) for _ in range(20)]

    assert [o.status_code for o in outcomes] == [200] * 20
    assert len(server.requests) == 20
    assert server.connections == 1


def serve_on_both(serve, handle):
    """Two servers on one port, at 127.0.0.1 and 127.0.0.2 (a URL names the port, so a DNS change keeps it)."""
    for _ in range(10):
        first = serve(handle, host="127.0.0.1")
        try:
            return first, serve(handle, host="127.0.0.2", port=first.port)
        except OSError:
            continue  # that port is taken on 127.0.0.2: try another
    raise AssertionError("no port free on both 127.0.0.1 and 127.0.0.2")


def test_a_changed_dns_answer_connects_to_the_new_address_and_never_reuses_the_old_connection(
    serve, fake_dns, allow_local
):
    """Pools are per vetted address: an idle connection to the old address must not carry a request that was vetted
    for the new one (nor the reverse, after a rebinding to a blocked address)."""
    old, new = serve_on_both(serve, answer(200))
    url = f"http://moving.test:{old.port}/hook"

    fake_dns.answers["moving.test"] = ["127.0.0.1"]
    assert transport.post(url, BODY, HEADERS).status_code == 200
    fake_dns.answers["moving.test"] = ["127.0.0.2"]
    assert transport.post(url, BODY, HEADERS).status_code == 200
    assert transport.post(url, BODY, HEADERS).status_code == 200

    assert (old.connections, len(old.requests)) == (1, 1)
    assert (new.connections, len(new.requests)) == (1, 2)
    assert {r["headers"]["host"] for r in old.requests + new.requests} == {f"moving.test:{old.port}"}


# --- Refused before connecting ---------------------------------------------------------------------------------


def connections_before_probe(server) -> int:
    """Connections `server` accepted before a probe of our own: the backlog is first in, first out, so once the probe
    is accepted any earlier connection has been too. (No sleep-and-hope.)"""
    with socket.create_connection((server.host, server.port)) as probe:
        wait_until(lambda: probe.getsockname() in server.peers, 2, "the probe connection accepted", interval=0.005)
        return server.peers.index(probe.getsockname())


@pytest.mark.parametrize(
    ("answers", "local", "kind"),
    [
        (["10.0.0.5"], False, "a private address;"),
        (["127.0.0.1", "10.0.0.5"], False, "a loopback address;"),
        (["127.0.0.1", "169.254.169.254"], True, "a cloud metadata address;"),
    ],
)
def test_a_name_resolving_to_a_blocked_address_is_refused_without_connecting(
    serve, fake_dns, settings, answers, local, kind
):
    """Every answer is vetted at send time; a live server on the first answer shows that nothing was connected."""
    settings.WEBHOOK_ALLOW_LOCAL_URLS = local
    server = serve(answer(200))
    fake_dns.answers["inside.test"] = answers

    outcome = transport.post(f"https://inside.test:{server.port}/hook", BODY, HEADERS)

    assert outcome.status_code is None
    assert outcome.error.startswith("BlockedAddress: ") and kind in outcome.error
    assert connections_before_probe(server) == 0


def test_a_name_that_does_not_resolve_is_refused(fake_dns, allow_local):
    outcome = transport.post("https://nowhere.test/hook", BODY, HEADERS)

    assert outcome.status_code is None
    assert outcome.error == "UnresolvableHost: Could not resolve nowhere.test"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("handle", [read_then_hang, dribble_body], ids=["hangs", "dribbles"])
def test_a_receiver_that_hangs_gets_a_logged_timeout_and_a_scheduled_retry(serve, allow_local, short_budget, org,
                                                                          handle):
    """The end of the path for a slow receiver: the attempt is in the log, the delivery is due again later."""
    from tests.support.webhooks import attempt_delivery, make_subscription
    from webhooks.models import Delivery, DeliveryAttempt
    from webhooks.services import emit

    server = serve(handle)
    sub = make_subscription(org, url=f"http://127.0.0.1:{server.port}/hook")
    emit(org=org, type="call.ended", data={})
    delivery = Delivery.objects.get(subscription=sub)

    assert attempt_delivery(delivery.pk) == "retry"
    attempt = DeliveryAttempt.objects.get(delivery=delivery)
    assert attempt.status_code is None and attempt.error.startswith("Timeout")
    delivery.refresh_from_db()
    assert (delivery.status, delivery.claim_token) == ("pending", None)
    assert delivery.next_attempt_at > attempt.created_at


@pytest.mark.django_db(transaction=True)
def test_a_reply_with_nul_bytes_is_logged_not_lost(serve, allow_local, org):
    """PostgreSQL text refuses NUL: a receiver answering with one must still get its attempt logged and the
    delivery recorded, or the attempt would be re-sent forever."""
    from tests.support.webhooks import attempt_delivery, make_subscription
    from webhooks.models import Delivery, DeliveryAttempt
    from webhooks.services import emit

    server = serve(answer(200, b"ok\x00done"))
    sub = make_subscription(org, url=f"http://127.0.0.1:{server.port}/hook")
    emit(org=org, type="call.ended", data={})
    delivery = Delivery.objects.get(subscription=sub)

    assert attempt_delivery(delivery.pk) == "succeeded"
    assert DeliveryAttempt.objects.get(delivery=delivery).response_body == "ok\ufffddone"
