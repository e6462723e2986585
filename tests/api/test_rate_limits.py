"""Per-key rate limits, shared by every process through Redis, with Retry-After and RateLimit-* headers."""

import json
import os
import subprocess
import sys
import time

import pytest
from rest_framework.test import APIClient

from tests.factories import make_key
from tests.support.celery_worker import test_database_url as database_url_for_subprocess


def wait_for_a_fresh_window(margin: float = 8.0) -> None:
    # Counts reset each minute; starting well inside a window keeps the test deterministic.
    left = 60 - time.time() % 60
    if left < margin:
        time.sleep(left + 0.1)


@pytest.fixture
def low_limits(settings):
    settings.RATE_LIMIT_READS_PER_MINUTE = 3
    settings.RATE_LIMIT_WRITES_PER_MINUTE = 2


def test_headers_on_every_response(api):
    first = api.get("/v1/me")
    second = api.get("/v1/me")
    assert first["RateLimit-Limit"] == "600"
    assert int(first["RateLimit-Remaining"]) == 599
    assert int(second["RateLimit-Remaining"]) == 598
    assert 1 <= int(first["RateLimit-Reset"]) <= 60


def test_over_the_read_limit_is_429_with_retry_after(api, low_limits):
    wait_for_a_fresh_window()
    statuses = [api.get("/v1/me").status_code for _ in range(3)]
    assert statuses == [200, 200, 200]
    response = api.get("/v1/me")
    assert response.status_code == 429
    assert response.json() == {"error": "rate_limited"}
    assert 1 <= int(response["Retry-After"]) <= 60
    assert response["RateLimit-Remaining"] == "0"
    assert response["RateLimit-Limit"] == "3"


def test_reads_and_writes_are_counted_apart(api, low_limits):
    wait_for_a_fresh_window()
    for _ in range(2):
        api.post("/v1/contacts", {"phone_number": "not a phone"}, format="json")
    assert api.post("/v1/contacts", {"phone_number": "x"}, format="json").status_code == 429
    assert api.get("/v1/me").status_code == 200


def test_limits_are_per_key(org, admin, low_limits):
    wait_for_a_fresh_window()
    first, second = APIClient(), APIClient()
    first.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(org, admin=admin)[1]}")
    second.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(org, admin=admin)[1]}")
    for _ in range(3):
        first.get("/v1/me")
    assert first.get("/v1/me").status_code == 429
    assert second.get("/v1/me").status_code == 200


def test_unauthenticated_requests_are_401_not_429(anon_api, low_limits):
    for _ in range(5):
        assert anon_api.get("/v1/me").status_code == 401


CLIENT_SCRIPT = """
import json, os, sys
import django
django.setup()
from django.test import Client
client = Client(HTTP_AUTHORIZATION="Bearer " + os.environ["KEY"])
print(json.dumps([client.get("/v1/me").status_code for _ in range(int(sys.argv[1]))]))
"""


def _subprocess_env(**extra) -> dict:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "voiceagent.test_settings",
        "DATABASE_URL": database_url_for_subprocess(),
        "PYTEST_XDIST_WORKER": os.environ.get("PYTEST_XDIST_WORKER", "gw0"),
        **extra,
    }


@pytest.mark.django_db(transaction=True)
def test_two_processes_share_one_count(org, admin):
    for _ in range(3):
        # Both processes must run inside one minute window; on a busy machine a window may roll over: retry.
        _, plaintext = make_key(org, admin=admin)
        env = _subprocess_env(KEY=plaintext, RATE_LIMIT_READS_PER_MINUTE="5")
        wait_for_a_fresh_window(margin=40)
        window = int(time.time() // 60)
        results = []
        for _ in range(2):
            out = subprocess.run(
                [sys.executable, "-c", CLIENT_SCRIPT, "4"], env=env, capture_output=True, text=True, timeout=120
            )
            assert out.returncode == 0, out.stderr[-3000:]
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
        if int(time.time() // 60) == window:
            break
    assert results[0] == [200, 200, 200, 200]
    assert results[1] == [200, 429, 429, 429]


def test_a_scope_refusal_reports_the_window_without_counting_itself(read_api):
    read_api.get("/v1/me")
    refused = read_api.post("/v1/contacts", {"phone_number": "+14155550100"}, format="json")
    assert refused.status_code == 403
    assert refused["RateLimit-Limit"] == "120"
    assert refused["RateLimit-Remaining"] == "120"
    assert 1 <= int(refused["RateLimit-Reset"]) <= 60
    assert read_api.get("/v1/me")["RateLimit-Remaining"] == "598"
