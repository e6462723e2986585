"""A stored Idempotency-Key record cannot be used to recover what its request carried (issue 37): its fingerprint of
the method, path and body is keyed with the server's secret, so hashing guesses (every phone number, every card
number a redaction took out of the stored call) against it finds nothing without the key. Records fingerprinted
before the keying still replay: the migration keys them, and one written by an older process during a rolling deploy
is still recognised."""

import hashlib
import importlib
import json

from api.models import IdempotencyKey
from contacts.models import Contact
from tests.support.migrations import apps_at

PATH = "/v1/contacts"
NUMBER = "+14155550123"


def _raw(number: str) -> bytes:
    return json.dumps({"phone_number": number, "name": "Ada"}).encode()


def _post(client, body: bytes, key: str = "k-1"):
    return client.post(PATH, body, content_type="application/json", HTTP_IDEMPOTENCY_KEY=key)


def _unkeyed(body: bytes, method: str = "POST", path: str = PATH) -> str:
    """The fingerprint as it was stored before the keying: anyone can compute it from a guess of the body."""
    digest = hashlib.sha256(body).hexdigest()
    return hashlib.sha256(f"{method}\n{path}\n{digest}".encode()).hexdigest()


def test_the_stored_fingerprint_cannot_be_matched_by_hashing_guesses(api):
    assert _post(api, _raw(NUMBER)).status_code == 201
    stored = IdempotencyKey.objects.get().fingerprint
    # An attacker with the table and the API's shape tries every number of an exchange: none matches.
    guesses = {_unkeyed(_raw(f"+1415555{n:04d}")) for n in range(10_000)}
    assert _unkeyed(_raw(NUMBER)) in guesses  # the guesses do include the number sent
    assert stored not in guesses
    assert hashlib.sha256(_raw(NUMBER)).hexdigest() not in stored


def test_the_fingerprint_depends_on_the_servers_secret(api, settings):
    assert _post(api, _raw(NUMBER), key="k-1").status_code == 201
    Contact.objects.all().delete()  # the same request again, under another key, stores a record again
    settings.SECRET_KEY = "another-secret-key-for-this-test-0123456789-abcdefghijklmnop"
    assert _post(api, _raw(NUMBER), key="k-2").status_code == 201
    first, second = (IdempotencyKey.objects.get(key=key).fingerprint for key in ("k-1", "k-2"))
    assert first != second


def test_a_retry_after_the_secret_key_is_rotated_still_replays(api, settings):
    first = _post(api, _raw(NUMBER))
    old = settings.SECRET_KEY
    settings.SECRET_KEY = "the-rotated-secret-key-for-this-test-0123456789-abcdefghijklm"
    settings.SECRET_KEY_FALLBACKS = [old]
    again = _post(api, _raw(NUMBER))
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true" and again.json() == first.json()
    other = _post(api, _raw("+14155550124"))
    assert (other.status_code, other.json()) == (422, {"error": "idempotency_key_reused"})


def test_a_record_fingerprinted_before_the_keying_still_replays(api):
    """A rolling deploy: a process older than the keying stored this record."""
    first = _post(api, _raw(NUMBER))
    IdempotencyKey.objects.update(fingerprint=_unkeyed(_raw(NUMBER)))
    again = _post(api, _raw(NUMBER))
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true" and again.json() == first.json()
    other = _post(api, _raw("+14155550124"))
    assert (other.status_code, other.json()) == (422, {"error": "idempotency_key_reused"})


def test_the_migration_keys_the_fingerprints_stored_before(api):
    migration = importlib.import_module("orgs.migrations.0015_idempotency_fingerprint_keyed")
    at_the_migration = apps_at([("orgs", "0015_idempotency_fingerprint_keyed")])  # the model was in orgs then
    first = _post(api, _raw(NUMBER))
    keyed = IdempotencyKey.objects.get().fingerprint
    IdempotencyKey.objects.update(fingerprint=_unkeyed(_raw(NUMBER)))
    migration.key_stored_fingerprints(at_the_migration, None)
    assert IdempotencyKey.objects.get().fingerprint == keyed
    migration.key_stored_fingerprints(at_the_migration, None)  # a second run leaves keyed ones alone
    assert IdempotencyKey.objects.get().fingerprint == keyed
    again = _post(api, _raw(NUMBER))
    assert again["Idempotent-Replayed"] == "true" and again.json() == first.json()
