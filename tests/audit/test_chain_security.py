"""What holds against the database role too (issue 35 items 2 and 7): a verify request does bounded work on any
chain, TRUNCATE is refused, the purge cannot be opened by a session setting, an entry inserted by SQL fails
`verify`, and a signed head checks out with the documented procedure."""

import base64
import hashlib
import json
import uuid
from datetime import timedelta
from types import SimpleNamespace

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from audit import chain
from audit.models import GENESIS_HASH, AuditChain, AuditEvent
from audit.services import record
from orgs.services import organization_update

pytestmark = pytest.mark.django_db

COLUMNS = ("id", "organization_id", "occurred_at", "action", "actor_type", "actor_id", "actor_label", "target_type",
           "target_id", "target_label", "changes", "ip", "user_agent", "request_id", "chain_seq", "prev_hash", "hash",
           "content_mac", "chain_mac")


def build_chain(org_id, count: int) -> None:
    """`count` valid sealed entries for the org (every hash, link and MAC right), written with one COPY, and the
    head after them: a long chain in seconds, which a verify that hashes everything would spend as long on again."""
    start = timezone.now() - timedelta(days=1)
    previous, lines = GENESIS_HASH, []
    changes = {"status": ["new", "in_progress"]}
    for seq in range(1, count + 1):
        entry = SimpleNamespace(
            id=uuid.uuid4(), organization_id=org_id, occurred_at=start + timedelta(milliseconds=seq),
            action="order.status_changed", actor_type="system", actor_id=None, actor_label="system",
            target_type="order", target_id=str(seq), target_label=f"Order #{seq}", changes=changes, ip=None,
            user_agent=None, request_id=None, chain_seq=seq, prev_hash=previous,
        )
        entry.hash = chain.entry_hash(entry)
        lines.append("\t".join([
            str(entry.id), str(org_id), entry.occurred_at.isoformat(), entry.action, "system", "\\N", "system",
            "order", entry.target_id, entry.target_label, json.dumps(changes), "\\N", "\\N", "\\N", str(seq),
            previous, entry.hash, chain.content_mac(entry), chain.chain_mac(entry.hash),
        ]))
        previous = entry.hash
    with connection.cursor() as cursor, cursor.copy(f"COPY audit_event ({', '.join(COLUMNS)}) FROM STDIN") as copy:
        copy.write("\n".join(lines) + "\n")
    AuditChain.objects.update_or_create(organization_id=org_id, defaults={"last_seq": count, "last_hash": previous})


def test_verify_of_a_long_chain_hashes_a_bounded_number_of_entries_and_moves_the_checkpoint(org, auditor, settings):
    settings.AUDIT_VERIFY_MAX_ENTRIES = 2_000
    build_chain(org.pk, 50_000)
    first = auditor.get("/v1/audit-events/verify").json()["data"]
    assert first == {"intact": None, "complete": False, "entries_checked": 2_000, "entries_hashed": 2_000,
                     "first_broken_id": None, "verified_through_seq": 2_000,
                     "head_seq": 50_001}  # and the key's own `api_key.created`, sealed on top
    # The next request starts at the checkpoint: the first 2,000 are not hashed again.
    second = auditor.get("/v1/audit-events/verify").json()["data"]
    assert (second["entries_hashed"], second["verified_through_seq"]) == (2_000, 4_000)
    assert AuditChain.objects.get(organization_id=org.pk).verified_through_seq == 4_000


def test_a_verify_request_past_a_checkpoint_checks_only_what_came_after(org, admin, auditor):
    build_chain(org.pk, 50)
    assert auditor.get("/v1/audit-events/verify").json()["data"]["intact"] is True
    organization_update(org=org, by=admin, name="Later")
    data = auditor.get("/v1/audit-events/verify").json()["data"]
    # 50 built, the key's `api_key.created` sealed on top, then this change: only the last one is hashed.
    assert (data["intact"], data["entries_hashed"], data["entries_checked"], data["head_seq"]) == (True, 1, 52, 52)


def test_truncate_is_refused(org, admin):
    organization_update(org=org, by=admin, name="Kept")
    with pytest.raises(DatabaseError, match="cannot be truncated"), transaction.atomic(), connection.cursor() as c:
        c.execute("TRUNCATE audit_event")
    assert AuditEvent.objects.for_org(org).exists()


def _old_sealed_entry(org, admin):
    """A sealed entry 401 days old (written so behind the guard's back, as if recorded then)."""
    organization_update(org=org, by=admin, name="Old")
    chain.seal(org.pk)
    entry = AuditEvent.objects.for_org(org).get()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("ALTER TABLE audit_event DISABLE TRIGGER audit_event_append_only")
        cursor.execute("UPDATE audit_event SET occurred_at = now() - interval '401 days' WHERE id = %s", [entry.id])
        cursor.execute("ALTER TABLE audit_event ENABLE TRIGGER audit_event_append_only")
    return entry


def test_no_session_setting_lets_a_delete_through(org, admin):
    entry = _old_sealed_entry(org, admin)
    for settings_ in ({"audit.purge_before": "infinity"},
                      {"audit.purge_before": "infinity", "audit.purge_token": "0" * 96}):
        with pytest.raises(DatabaseError, match="cannot be deleted"), transaction.atomic(), connection.cursor() as c:
            for name, value in settings_.items():
                c.execute("SELECT set_config(%s, %s, true)", [name, value])
            c.execute("DELETE FROM audit_event WHERE id = %s", [entry.id])
    # The purge function itself never takes what is younger than 30 days, whatever cutoff it is given.
    with pytest.raises(DatabaseError, match="at least 30 days"), transaction.atomic(), connection.cursor() as c:
        c.execute("SELECT audit_purge(%s, now())", [org.pk])
    assert AuditEvent.objects.filter(pk=entry.pk).exists()
    assert chain.purge() == 1  # the retention purge, through audit_purge(), still does its job
    assert not AuditEvent.objects.filter(pk=entry.pk).exists()


def _forge(org, *, sealed: bool):
    """An entry INSERTed with SQL, as a session with the table's rights but not the chain's key would: unsealed
    (for the sealer to take), or sealed on top of the head with a correct sha256 and the head moved to it."""
    head = AuditChain.objects.get(organization_id=org.pk)
    forged = SimpleNamespace(
        id=uuid.uuid4(), organization_id=org.pk, occurred_at=timezone.now().replace(microsecond=0),
        action="api_key.revoked", actor_type="system", actor_id=None, actor_label="system", target_type="api_key",
        target_id=None, target_label="forged", changes={}, ip=None, user_agent=None, request_id=None,
        chain_seq=head.last_seq + 1 if sealed else None, prev_hash=head.last_hash if sealed else None,
    )
    forged.hash = chain.entry_hash(forged) if sealed else None
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO audit_event ({', '.join(COLUMNS)}) VALUES ({', '.join(['%s'] * len(COLUMNS))})",
            [forged.id, org.pk, forged.occurred_at, forged.action, "system", None, "system", "api_key", None,
             "forged", "{}", None, None, None, forged.chain_seq, forged.prev_hash, forged.hash,
             hashlib.sha256(b"no key").hexdigest(), hashlib.sha256(b"no key either").hexdigest() if sealed else None],
        )
        if sealed:
            cursor.execute("UPDATE audit_chain SET last_seq = %s, last_hash = %s WHERE organization_id = %s",
                           [forged.chain_seq, forged.hash, org.pk])
    return str(forged.id)


@pytest.mark.parametrize("sealed", [False, True], ids=["unsealed", "sealed"])
def test_an_entry_inserted_with_sql_fails_verify(org, admin, auditor, sealed):
    organization_update(org=org, by=admin, name="Real")
    chain.seal(org.pk)
    forged_id = _forge(org, sealed=sealed)
    data = auditor.get("/v1/audit-events/verify").json()["data"]
    assert (data["intact"], data["first_broken_id"]) == (False, forged_id)
    # The key's entry and the real one hold; the forged one is the third.
    assert chain.verify(org.pk) == {"intact": False, "entries_checked": 3, "first_broken_id": forged_id}


def test_entries_written_by_the_app_carry_both_macs(org, admin):
    with transaction.atomic():
        entry = record(org=org, action="organization.updated", target=org)
    chain.seal(org.pk)
    entry.refresh_from_db()
    assert entry.content_mac == chain.content_mac(entry) and entry.chain_mac == chain.chain_mac(entry.hash)


def check_signed_head(head: dict, public_key_b64: str) -> dict:
    """The procedure docs/api.md#audit-trail gives an organization: check the signature of `payload` with the
    public key it kept, then read the fields from the payload (not from beside it)."""
    Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key_b64)).verify(
        base64.b64decode(head["signature"]), head["payload"].encode())
    return json.loads(head["payload"])


def test_the_signed_head_verifies_and_names_an_entry_with_that_hash(org, admin, auditor):
    for i in range(3):
        organization_update(org=org, by=admin, name=f"Name {i}")
    head = auditor.get("/v1/audit-events/head").json()["data"]
    kept_key = head["public_key"]
    assert head["key_id"] == hashlib.sha256(base64.b64decode(kept_key)).hexdigest()[:16]
    payload = check_signed_head(head, kept_key)
    assert payload == {key: head[key] for key in ("organization_id", "seq", "hash", "entry_id", "signed_at")}
    # The key's `api_key.created` and three changes.
    assert (payload["organization_id"], payload["seq"], head["algorithm"]) == (str(org.pk), 4, "ed25519")
    # Later: the entry the kept head names still has that position and hash.
    entry = auditor.get(f"/v1/audit-events/{payload['entry_id']}").json()["data"]
    assert (entry["chain"]["seq"], entry["chain"]["hash"]) == (payload["seq"], payload["hash"])
    # A payload changed after signing, or a key other than the kept one, does not verify.
    with pytest.raises(InvalidSignature):
        check_signed_head({**head, "payload": head["payload"].replace('"seq":4', '"seq":3')}, kept_key)
    organization_update(org=org, by=admin, name="Next")
    assert auditor.get("/v1/audit-events/head").json()["data"]["public_key"] == kept_key  # one key per platform


def test_a_head_whose_entry_does_not_hold_is_not_signed(org, admin, auditor):
    organization_update(org=org, by=admin, name="Real")
    chain.seal(org.pk)
    _forge(org, sealed=True)
    response = auditor.get("/v1/audit-events/head")
    assert (response.status_code, response.json()["details"]) == (409, {"field": "chain"})
