"""Issue 15's decision, across processes: each gunicorn keeps the keys it has read, and a key revoked through the
product is refused by the very next request in every process, with their caches warm."""

import http.client
import json

import pytest

from orgs.models import ApiKey
from orgs.services import api_key_revoke
from tests.support.gunicorn import running_gunicorn

pytestmark = [pytest.mark.drill, pytest.mark.django_db(transaction=True)]


def _me(port, plaintext):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
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
