"""Issue 15's decision, across processes: each gunicorn keeps the keys it has read, and a key revoked through the
product is refused by the very next request in every process, with their caches warm."""

import http.client
import json
import time

import pytest

from core import counters
from orgs.models import ApiKey
from orgs.services import api_key_revoke
from tests.support.gunicorn import running_gunicorn

pytestmark = [pytest.mark.drill, pytest.mark.django_db(transaction=True)]


def _me(port, plaintext):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)  # a worker still booting on a loaded machine
    connection.request("GET", "/v1/me", headers={"Authorization": f"Bearer {plaintext}"})
    response = connection.getresponse()
    return response.status, json.loads(response.read())


def test_a_revoked_key_is_refused_by_the_next_request_in_every_process(write_key, admin, tmp_path):
    key, plaintext = write_key
    with running_gunicorn(tmp_path / "a.log") as first, running_gunicorn(tmp_path / "b.log") as second:
        for port in (first, second):
            assert _me(port, plaintext)[0] == 200
        # Warm: a change written behind the product's back (no epoch) is not seen, each process answers from its
        # own copy of the key.
        ApiKey.objects.filter(pk=key.pk).update(name="renamed behind the cache")
        for port in (first, second):
            status, body = _me(port, plaintext)
            assert (status, body["data"]["key_name"]) == (200, key.name)

        api_key_revoke(key=key, revoked_by=admin)
        for port in (first, second):
            assert _me(port, plaintext) == (401, {"error": "unauthorized"})


def test_a_key_revoked_while_the_revoker_cannot_reach_redis_is_refused_within_api_key_cache_seconds(
    write_key, admin, tmp_path, settings
):
    """The revoking process cannot reach Redis (so the epoch never moves there, retries included) while the worker
    that kept the key can, and goes on matching its epoch: the worker still refuses the key once its copy is
    API_KEY_CACHE_SECONDS old (shortened here from 60)."""
    key, plaintext = write_key
    with running_gunicorn(tmp_path / "a.log", API_KEY_CACHE_SECONDS="2") as port:
        assert _me(port, plaintext)[0] == 200
        settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": "redis://127.0.0.1:1/0"}}
        try:
            api_key_revoke(key=key, revoked_by=admin)
            revoked_at = time.monotonic()
            deadline = revoked_at + 2 + 15  # the bound, plus room for a loaded machine
            while (answer := _me(port, plaintext))[0] == 200 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert answer == (401, {"error": "unauthorized"})
        finally:
            counters.reset()
