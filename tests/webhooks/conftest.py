"""Fixtures of the webhook tests: a fake DNS at the one DNS edge (webhooks.ssrf.resolve_host), loopback HTTP
receivers, and the Celery worker fixture (tests/support/celery_worker.py)."""

import socket

import pytest

from tests.support.celery_worker import celery_worker_factory  # noqa: F401 - fixture re-export
from tests.support.receiver import Receiver


class FakeDNS:
    """Names -> addresses. Unknown names do not resolve. Literal IPs resolve to themselves, as getaddrinfo does."""

    def __init__(self):
        self.answers = {"hooks.example.com": ["93.184.216.34"], "api.partner.io": ["151.101.1.69", "2606:4700::1"]}

    def __call__(self, host, port):
        import ipaddress

        try:
            return [str(ipaddress.ip_address(host))]
        except ValueError:
            pass
        if host in self.answers:
            return list(self.answers[host])
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


@pytest.fixture
def fake_dns(monkeypatch):
    dns = FakeDNS()
    monkeypatch.setattr("webhooks.ssrf.resolve_host", dns)
    return dns


@pytest.fixture
def receiver():
    with Receiver() as r:
        yield r


@pytest.fixture
def allow_local(settings):
    settings.WEBHOOK_ALLOW_LOCAL_URLS = True
