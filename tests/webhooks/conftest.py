"""Fixtures of the webhook tests: a fake DNS at the one DNS edge (webhooks.ssrf.resolve_host), loopback HTTP
receivers (tests/support/), and the Celery worker fixture (tests/support/celery_worker.py)."""

import pytest

from tests.support.receiver import Receiver
from tests.support.webhooks import FakeDNS


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
