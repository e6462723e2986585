"""The authentication rules of docs/api.md#authentication, one contract each."""

import logging
import time
from types import SimpleNamespace

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from api import authentication
from api.authentication import forget_kept_keys
from core import counters
from knowledge.services import location_create
from orgs.models import ApiKey
from orgs.services import api_key_revoke, organization_update
from tests.factories import make_key
from tests.support.redis_spy import redis_round_trips

UNAUTHORIZED = {"error": "unauthorized"}


def call(header: str | None, path: str = "/v1/me", method: str = "get", **kwargs):
    client = APIClient()
    extra = {"HTTP_AUTHORIZATION": header} if header is not None else {}
    return getattr(client, method)(path, **extra, **kwargs)


def assert_unauthorized(response):
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED
    assert response["WWW-Authenticate"] == "Bearer"
    assert response["Content-Type"] == "application/json"


def test_rule1_every_v1_endpoint_requires_a_key(db):
    assert_unauthorized(call(None))


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "BeArEr", "Token", "Basic"])
def test_rule2_scheme_is_case_sensitive(write_key, scheme):
    assert_unauthorized(call(f"{scheme} {write_key[1]}"))


@pytest.mark.parametrize(
    "template",
    [
        "Bearer  {key}",  # two spaces
        " Bearer {key}",  # leading space
        "Bearer {key} ",  # trailing space
        "Bearer\t{key}",  # tab
        "Bearer {key}x",  # over-long
        "Bearer {short}",  # truncated
        "Bearer ",  # missing key
        "Bearer",  # scheme alone
        "{key}",  # no scheme
        "Bearer {key},Bearer {key}",
    ],
)
def test_malformed_headers_are_401(write_key, template):
    plaintext = write_key[1]
    assert_unauthorized(call(template.format(key=plaintext, short=plaintext[:-1])))


@pytest.mark.parametrize("bad", ["va_live_" + "a" * 31 + "!", "va_live_" + "a" * 31 + "-", "va_live_" + "é" * 32])
def test_keys_with_non_alphanumeric_characters_are_401(db, bad):
    assert_unauthorized(call(f"Bearer {bad}"))


@pytest.mark.parametrize("param", ["api_key", "token", "key", "access_token", "authorization"])
def test_rule3_keys_in_query_strings_never_authenticate(write_key, param):
    assert_unauthorized(call(None, path=f"/v1/me?{param}={write_key[1]}"))


def test_rule3_keys_in_bodies_never_authenticate(write_key):
    response = call(None, method="post", data={"api_key": write_key[1], "token": write_key[1]}, format="json")
    assert_unauthorized(response)


def test_rule4_key_format(write_key):
    key, plaintext = write_key
    assert len(plaintext) == 40
    assert plaintext.startswith("va_live_")
    assert plaintext[8:].isalnum() and plaintext[8:].isascii()
    assert key.key_prefix == plaintext[:12]


def test_rule4_keys_are_random(org, admin):
    keys = {make_key(org, admin=admin)[1] for _ in range(20)}
    assert len(keys) == 20


def test_key_is_stored_only_as_a_digest(write_key):
    key, plaintext = write_key
    row = ApiKey.objects.filter(pk=key.pk).values().get()
    assert plaintext not in repr(row)
    import hashlib

    assert row["key_digest"] == hashlib.sha256(plaintext.encode()).hexdigest()


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_rule5_and_6_read_key_gets_insufficient_scope_on_writes(read_key, method):
    response = call(f"Bearer {read_key[1]}", path="/v1/me", method=method)
    assert response.status_code == 403
    assert response.json() == {"error": "insufficient_scope", "required": "write"}


def test_rule5_read_key_may_read(read_key):
    response = call(f"Bearer {read_key[1]}")
    assert response.status_code == 200
    assert response.json()["data"]["scopes"] == ["read"]


def test_scope_is_checked_before_the_handler_looks_anything_up(read_key):
    # docs/api.md#authentication: a read-only key PATCHing a missing id gets 403, not 404.
    response = call(f"Bearer {read_key[1]}", path="/v1/facts/00000000-0000-0000-0000-000000000000", method="patch")
    assert response.status_code == 403
    assert response.json() == {"error": "insufficient_scope", "required": "write"}


def test_rule7_unknown_key_is_401(db):
    assert_unauthorized(call("Bearer va_live_" + "A" * 32))


def test_rule7_revoked_key_is_401_with_the_same_body(write_key, admin):
    key, plaintext = write_key
    api_key_revoke(key=key, revoked_by=admin)
    assert_unauthorized(call(f"Bearer {plaintext}"))


def test_rule8_another_orgs_key_sees_its_own_org(write_key, other_key, other_org):
    response = call(f"Bearer {other_key[1]}")
    assert response.status_code == 200
    assert response.json()["data"]["org_id"] == str(other_org.id)


def test_rule9_revocation_is_immediate(write_key, admin):
    key, plaintext = write_key
    assert call(f"Bearer {plaintext}").status_code == 200
    api_key_revoke(key=key, revoked_by=admin)
    assert_unauthorized(call(f"Bearer {plaintext}"))


def test_rule10_both_keys_work_until_the_old_one_is_revoked(org, admin, write_key):
    old_key, old = write_key
    _, new = make_key(org, admin=admin, name="New key")
    assert call(f"Bearer {old}").status_code == 200
    assert call(f"Bearer {new}").status_code == 200
    api_key_revoke(key=old_key, revoked_by=admin)
    assert call(f"Bearer {old}").status_code == 401
    assert call(f"Bearer {new}").status_code == 200


def test_rule6_and_11_no_api_endpoint_creates_or_revokes_keys(write_key):
    for path in ["/v1/api-keys", "/v1/keys", f"/v1/api-keys/{write_key[0].id}"]:
        for method in ("post", "delete"):
            response = call(f"Bearer {write_key[1]}", path=path, method=method)
            assert response.status_code == 404
            assert response.json() == {"error": "not_found"}
    assert ApiKey.objects.count() == 1


def test_rule11_me_confirms_scope(write_key, read_key):
    assert call(f"Bearer {write_key[1]}").json()["data"]["scopes"] == ["read", "write"]
    assert call(f"Bearer {read_key[1]}").json()["data"]["scopes"] == ["read"]


def test_last_used_is_written_at_most_once_a_minute(write_key, django_assert_num_queries, monkeypatch):
    key, plaintext = write_key
    assert key.last_used_at is None
    with django_assert_num_queries(2):  # the lookup, and the first last_used write
        call(f"Bearer {plaintext}")
    key.refresh_from_db()
    first = key.last_used_at
    assert first is not None
    with django_assert_num_queries(0):  # the key is kept, and used a moment ago
        call(f"Bearer {plaintext}")
    key.refresh_from_db()
    assert key.last_used_at == first
    later = timezone.now() + timezone.timedelta(minutes=2)
    monkeypatch.setattr("api.authentication.timezone.now", lambda: later)
    with django_assert_num_queries(1):  # a minute on: the write, and still no lookup
        call(f"Bearer {plaintext}")
    key.refresh_from_db()
    assert key.last_used_at == later


def test_a_kept_key_costs_no_query_and_one_redis_round_trip(write_key, django_assert_num_queries):
    call(f"Bearer {write_key[1]}")  # the first request reads the key and writes last_used_at
    with django_assert_num_queries(0), redis_round_trips() as trips:
        assert call(f"Bearer {write_key[1]}").status_code == 200
    assert len(trips) == 1
    with django_assert_num_queries(1):
        assert call("Bearer va_live_" + "Z" * 32).status_code == 401


def test_a_key_not_kept_is_one_indexed_lookup(write_key, django_assert_num_queries):
    call(f"Bearer {write_key[1]}")
    forget_kept_keys()
    with django_assert_num_queries(1):
        assert call(f"Bearer {write_key[1]}").status_code == 200


def test_a_kept_key_revoked_is_refused_by_the_next_request(write_key, admin, django_assert_num_queries):
    key, plaintext = write_key
    assert call(f"Bearer {plaintext}").status_code == 200
    api_key_revoke(key=key, revoked_by=admin)
    with django_assert_num_queries(1):  # the epoch moved: PostgreSQL decides
        assert_unauthorized(call(f"Bearer {plaintext}"))


def test_an_organization_change_reaches_the_kept_key(write_key, admin):
    key, plaintext = write_key
    assert call(f"Bearer {plaintext}").json()["data"]["org_name"] == key.organization.name
    organization_update(org=key.organization, by=admin, name="Renamed Pizza")
    assert call(f"Bearer {plaintext}").json()["data"]["org_name"] == "Renamed Pizza"


def test_the_zone_a_first_location_gives_the_org_reaches_the_kept_key(write_key, admin):
    key, plaintext = write_key
    assert call(f"Bearer {plaintext}").json()["data"]["time_zone"] == "UTC"
    location_create(org=key.organization, name="Venice", address="1 Main St", timezone="America/Los_Angeles",
                    phone_number="+14155550100", actor=admin)
    assert call(f"Bearer {plaintext}").json()["data"]["time_zone"] == "America/Los_Angeles"


def test_with_the_epoch_unreadable_a_revoked_key_is_refused_from_postgresql(write_key, admin, monkeypatch):
    key, plaintext = write_key
    assert call(f"Bearer {plaintext}").status_code == 200
    # The revocation's epoch never reaches Redis, and Redis stays unreachable for the next request.
    monkeypatch.setattr("orgs.key_epochs.counters.bump", lambda *flags: False)
    monkeypatch.setattr("orgs.key_epochs._bump", lambda flags: None)
    api_key_revoke(key=key, revoked_by=admin)
    monkeypatch.setattr(counters, "_down_until", time.monotonic() + 60)
    try:
        assert_unauthorized(call(f"Bearer {plaintext}"))
    finally:
        counters.reset()


def test_malformed_and_unknown_keys_take_the_same_lookup(db, django_assert_num_queries):
    # Timing must not tell a malformed key from an unknown one: both cost exactly one digest lookup.
    for header in ["bearer x", "Bearer " + "a" * 40, "Bearer va_live_short"]:
        with django_assert_num_queries(1):
            assert call(header).status_code == 401


def test_no_key_reaches_a_log(write_key, caplog):
    plaintext = write_key[1]
    with caplog.at_level(logging.DEBUG):
        call(f"Bearer {plaintext}")
        call(f"bearer {plaintext}")
        call(None, path=f"/v1/me?api_key={plaintext}")
        call(f"Bearer {plaintext}", path="/v1/__test__/boom")
    assert caplog.records  # the boom view logged
    assert all(plaintext not in record.getMessage() and plaintext not in (record.exc_text or "")
               for record in caplog.records)


@pytest.mark.parametrize(
    "extra",
    [{"HTTP_ACCEPT": "text/html"}, {"HTTP_ACCEPT": "application/xml"}, {"QUERY_STRING": "format=xml"},
     {"QUERY_STRING": "format=api"}],
)
def test_negotiation_never_answers_before_authentication(db, extra):
    response = APIClient().get("/v1/me", **extra)
    assert_unauthorized(response)


def test_a_trailing_newline_after_the_key_is_401(write_key):
    assert_unauthorized(call(f"Bearer {write_key[1]}\n"))


def test_a_process_that_sees_redis_fail_drops_its_kept_keys(write_key, org, admin, settings):
    """A revocation whose epoch never reached Redis (the revoker could not reach it; or Redis came back from an older
    snapshot, epoch and all): the process that saw Redis fail meanwhile no longer trusts its kept copy."""
    key, plaintext = write_key
    assert call(f"Bearer {plaintext}").status_code == 200  # kept, with its epoch
    ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now())  # revoked, the epoch left as it was
    _, other = make_key(org, admin=admin, name="Another")
    live = settings.CACHES["default"]["LOCATION"]
    settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": "redis://127.0.0.1:1/0"}}
    assert call(f"Bearer {other}").status_code == 200  # another key's request meets Redis down
    settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": live}}
    counters.reset()  # Redis is back, the old epoch with it
    assert_unauthorized(call(f"Bearer {plaintext}"))


def test_a_kept_key_is_read_again_once_api_key_cache_seconds_old(write_key, settings, monkeypatch,
                                                                 django_assert_num_queries):
    key, plaintext = write_key
    settings.API_KEY_CACHE_SECONDS = 60
    clock = [1000.0]  # the process's monotonic clock as the test sets it: the bound, not the machine's speed
    monkeypatch.setattr(authentication, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    assert call(f"Bearer {plaintext}").status_code == 200
    clock[0] += 59.9
    with django_assert_num_queries(0):
        assert call(f"Bearer {plaintext}").status_code == 200
    ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now())  # the epoch left as it was
    clock[0] += 0.1  # the kept copy is now API_KEY_CACHE_SECONDS old
    with django_assert_num_queries(1):
        assert_unauthorized(call(f"Bearer {plaintext}"))
