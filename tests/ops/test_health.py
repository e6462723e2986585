"""/healthz and /readyz: outside /v1, no key, never cached; /readyz names each check with its latency and turns 503
within a second of PostgreSQL or Redis going away, and 200 again when it returns."""

import time

import pytest
import redis
from django.db.utils import ConnectionHandler
from django.test import Client

from tests.support.celery_worker import RedisServer
from tests.support.database import server_address, settings_through
from tests.support.tcp_proxy import TcpProxy
from voiceagent import health

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_readyz_brake():
    health.readyz_brake.clear()
    yield
    health.readyz_brake.clear()


def test_healthz_answers_without_a_key_and_is_never_cached(client):
    response = client.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})
    assert "no-store" in response["Cache-Control"]
    assert client.post("/healthz").status_code == 405


def test_readyz_names_every_check_with_its_latency(client):
    response = client.get("/readyz")
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    body = response.json()
    assert body["status"] == "ready"
    assert set(body["checks"]) == {"database", "redis", "broker"}
    assert all(c["ok"] is True and isinstance(c["ms"], float) for c in body["checks"].values())
    assert "RateLimit-Limit" not in response


def _ready(client):
    started = time.perf_counter()
    response = client.get("/readyz")
    return response.status_code, response.json(), time.perf_counter() - started


def test_redis_stopping_leaves_it_200_degraded_naming_the_check_within_a_second_and_ready_again(client, settings):
    """A load balancer checks /readyz: every node shares Redis, so a 503 for it would take the whole fleet out of
    rotation during a Redis blip, while the API serves without Redis."""
    server = RedisServer().start()
    try:
        settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": server.url}}
        settings.CELERY_BROKER_URL = server.url
        status, body, _ = _ready(client)
        assert (status, body["status"]) == (200, "ready")
        server.stop()
        status, body, took = _ready(client)
        assert status == 200 and took < 1.0
        assert body["status"] == "degraded"
        assert body["checks"]["redis"]["ok"] is False and body["checks"]["broker"]["ok"] is False
        assert body["checks"]["redis"]["error"] == "ConnectionError"
        assert body["checks"]["database"]["ok"] is True
        server.start()
        status, body, _ = _ready(client)
        assert (status, body["status"]) == (200, "ready")
    finally:
        server.stop()


def test_the_broker_alone_down_is_degraded_too(client, settings):
    server = RedisServer().start()
    try:
        settings.CELERY_BROKER_URL = server.url
        server.stop()
        status, body, _ = _ready(client)
        assert (status, body["status"]) == (200, "degraded")
        assert [name for name, check in body["checks"].items() if not check["ok"]] == ["broker"]
    finally:
        server.stop()


def test_postgresql_stopping_makes_it_503_within_a_second_and_200_again(client, monkeypatch):
    """PostgreSQL reached through a forwarder the test stops and starts: open connections reset, new ones refused.
    The check's connections come from a handler of their own, aimed at the test database through the forwarder."""
    proxy = TcpProxy(server_address()).start()
    handler = ConnectionHandler({"default": settings_through("127.0.0.1", proxy.port)})
    monkeypatch.setattr(health, "connections", handler)
    try:
        status, body, _ = _ready(client)
        assert status == 200, body
        proxy.stop()
        status, body, took = _ready(client)
        assert status == 503 and took < 1.0
        assert body["status"] == "unavailable"
        assert body["checks"]["database"] == {"ok": False, "ms": body["checks"]["database"]["ms"],
                                              "error": "OperationalError"}
        assert body["checks"]["redis"]["ok"] is True
        status, _, took = _ready(client)  # and stays so, quickly, while it is down
        assert status == 503 and took < 1.0
        proxy.start()
        status, body, _ = _ready(client)
        assert status == 200, body
    finally:
        proxy.stop()
        handler.close_all()


def test_html_pages_carry_a_content_security_policy_and_json_does_not(client, admin_client):
    page = admin_client.get("/calls/")
    policy = page["Content-Security-Policy"]
    assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy and "unsafe-inline" not in policy
    assert client.get("/login/")["Content-Security-Policy"] == policy
    assert "Content-Security-Policy" not in client.get("/healthz")


def test_the_docs_page_loads_redoc_from_this_origin(client):
    page = client.get("/api/docs")
    html = page.content.decode()
    assert page.status_code == 200
    assert "cdn" not in html.lower() and "googleapis" not in html
    assert '<script src="/static/drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"></script>' in html
    assert "script-src 'self';" in page["Content-Security-Policy"]


def test_readyz_reuses_its_redis_connections(client, settings):
    """Each hit used to open two connections (cache and broker): a prober could fill Redis's connection table."""
    server = RedisServer().start()
    try:
        settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": server.url}}
        settings.CELERY_BROKER_URL = server.url.replace("/0", "/1")
        assert _ready(client)[0] == 200  # the pools open their connections
        observer = redis.Redis.from_url(server.url)
        before = observer.info("stats")["total_connections_received"]
        assert all(_ready(client)[0] == 200 for _ in range(20))
        assert observer.info("stats")["total_connections_received"] == before
        observer.close()
    finally:
        server.stop()


def test_readyz_is_braked_per_client_address(settings):
    settings.READYZ_PER_MINUTE = 3
    prober = Client(REMOTE_ADDR="198.51.100.7")
    assert [prober.get("/readyz").status_code for _ in range(3)] == [200] * 3
    braked = prober.get("/readyz")
    assert (braked.status_code, braked.json()) == (429, {"status": "too_many_requests"})
    assert 1 <= int(braked["Retry-After"]) <= 60 and "no-store" in braked["Cache-Control"]
    assert Client(REMOTE_ADDR="198.51.100.8").get("/readyz").status_code == 200  # another address is not
    for _ in range(3):
        Client(REMOTE_ADDR="2001:db8:7::1").get("/readyz")
    assert Client(REMOTE_ADDR="2001:db8:7::2").get("/readyz").status_code == 429  # one IPv6 /64, one count
