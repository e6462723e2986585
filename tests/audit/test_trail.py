"""The audit trail's own rules: one entry in the change's transaction, nothing when it rolls back, a table that
refuses UPDATE and DELETE, the per-org hash chain and what `verify` reports, the retention purge."""

import hashlib
import json
from datetime import timedelta

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from audit import chain
from audit.chain import canonical_bytes, seal, verify
from audit.models import AuditChain, AuditEvent
from audit.services import record
from core.actors import acting_as, user_actor
from orgs.services import organization_update


def entries(org, action=None):
    rows = AuditEvent.objects.for_org(org).order_by("occurred_at", "id")
    return list(rows.filter(action=action) if action else rows)


def test_a_change_and_its_entry_commit_together(org, admin):
    organization_update(org=org, by=admin, name="Renamed")
    [entry] = entries(org, "organization.updated")
    assert entry.changes == {"name": ["Acme Pizza", "Renamed"]}
    assert (entry.target_type, entry.target_id, entry.target_label) == ("organization", str(org.pk), "Renamed")
    assert (entry.actor_type, entry.actor_id) == ("system", None)  # no request: the system


def test_a_rolled_back_change_leaves_no_entry(org, admin):
    with pytest.raises(RuntimeError), transaction.atomic():
        organization_update(org=org, by=admin, name="Never")
        raise RuntimeError("roll back")
    assert entries(org, "organization.updated") == []
    org.refresh_from_db()
    assert org.name == "Acme Pizza"


def test_a_change_that_changes_nothing_records_nothing(org, admin):
    organization_update(org=org, by=admin, name=org.name)
    assert entries(org, "organization.updated") == []


def test_an_unknown_action_is_refused(org):
    with pytest.raises(ValueError, match="Unknown audit action"):
        record(org=org, action="nothing.happened")


def test_secret_fields_are_redacted_whatever_the_caller_passes(org):
    with transaction.atomic():
        entry = record(org=org, action="organization.updated", target=org,
                       changes={"secret": ["whsec_old", "whsec_new"], "password": [None, "hunter2hunter2"],
                                "note": [None, "key va_live_abcdefghijklmnopqrstuvwxyz012345 pasted"]})
    entry.refresh_from_db()
    assert entry.changes["secret"] == ["[redacted]", "[redacted]"]
    assert entry.changes["password"] == [None, "[redacted]"]
    assert "abcdefghijklmnop" not in json.dumps(entry.changes)


def _raw(sql, params=()):
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def _sealed_entries(org, admin, n=3):
    for i in range(n):
        organization_update(org=org, by=admin, name=f"Name {i}")
    assert seal(org.pk) == n
    return entries(org)


def test_update_and_delete_fail_at_the_database(org, admin):
    entry = _sealed_entries(org, admin, 1)[0]
    with pytest.raises(DatabaseError, match="cannot be changed"):
        _raw("UPDATE audit_event SET action = 'api_key.created' WHERE id = %s", [entry.id])
    with pytest.raises(DatabaseError, match="cannot be deleted"):
        _raw("DELETE FROM audit_event WHERE id = %s", [entry.id])
    organization_update(org=org, by=admin, name="Unsealed")
    unsealed = entries(org)[-1]
    # Not even an unsealed row may change beyond its seal, nor a sealed one be sealed again.
    with pytest.raises(DatabaseError, match="cannot be changed"):
        _raw("UPDATE audit_event SET hash = repeat('a', 64), actor_label = 'someone else' WHERE id = %s",
             [unsealed.id])
    with pytest.raises(DatabaseError, match="cannot be changed"):
        _raw("UPDATE audit_event SET hash = repeat('a', 64) WHERE id = %s", [entry.id])
    # The purge's own declaration does not let a recent row go.
    cutoff = timezone.now() - timedelta(days=1)
    with pytest.raises(DatabaseError, match="cannot be deleted"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('audit.purge_before', %s, true)", [cutoff.isoformat()])
        cursor.execute("DELETE FROM audit_event WHERE id = %s", [unsealed.id])  # newer than the cutoff
    assert AuditEvent.objects.filter(pk=entry.pk, action="organization.updated").exists()


def _behind_the_apps_back(sql, params):
    """What someone with the database's owner rights could do: switch the guard off, change rows, switch it on."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("ALTER TABLE audit_event DISABLE TRIGGER audit_event_append_only")
        cursor.execute(sql, params)
        cursor.execute("ALTER TABLE audit_event ENABLE TRIGGER audit_event_append_only")


def test_the_chain_links_each_entry_to_the_previous_one(org, admin):
    rows = _sealed_entries(org, admin, 3)
    assert [row.chain_seq for row in rows] == [1, 2, 3]
    assert rows[0].prev_hash == "0" * 64
    for previous, row in zip(rows, rows[1:], strict=False):
        assert row.prev_hash == previous.hash
    for row in rows:  # the documented bytes, recomputed by hand
        document = {
            "id": str(row.id), "organization_id": str(org.pk), "chain_seq": row.chain_seq,
            "prev_hash": row.prev_hash, "occurred_at": row.occurred_at.strftime("%Y-%m-%dT%H:%M:%S.")
            + f"{row.occurred_at.microsecond // 1000:03d}Z", "action": row.action,
            "actor": {"type": row.actor_type, "id": row.actor_id, "label": row.actor_label},
            "target": {"type": row.target_type, "id": row.target_id, "label": row.target_label},
            "changes": row.changes, "ip": row.ip, "user_agent": row.user_agent, "request_id": row.request_id,
        }
        data = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        assert data == canonical_bytes(row)
        assert hashlib.sha256(data).hexdigest() == row.hash
    assert verify(org.pk) == {"intact": True, "entries_checked": 3, "first_broken_id": None}


def test_verify_reports_an_entry_altered_with_raw_sql(org, admin):
    rows = _sealed_entries(org, admin, 3)
    _behind_the_apps_back("UPDATE audit_event SET changes = '{}' WHERE id = %s", [rows[1].id])
    assert verify(org.pk) == {"intact": False, "entries_checked": 2, "first_broken_id": str(rows[1].id)}


def test_verify_reports_an_altered_entry_whose_hash_was_recomputed(org, admin):
    rows = _sealed_entries(org, admin, 3)
    forged = AuditEvent.objects.get(pk=rows[0].pk)
    forged.actor_label = "someone else"
    _behind_the_apps_back("UPDATE audit_event SET actor_label = %s, hash = %s WHERE id = %s",
                          [forged.actor_label, chain.entry_hash(forged), forged.id])
    # Its MACs no longer hold (no key to recompute them), so the altered entry itself is named, not only the next.
    assert verify(org.pk)["first_broken_id"] == str(rows[0].id)


def test_verify_reports_a_deleted_entry(org, admin):
    rows = _sealed_entries(org, admin, 3)
    _behind_the_apps_back("DELETE FROM audit_event WHERE id = %s", [rows[1].id])
    assert verify(org.pk) == {"intact": False, "entries_checked": 2, "first_broken_id": str(rows[2].id)}


def test_verify_reports_the_newest_entries_deleted(org, admin):
    rows = _sealed_entries(org, admin, 3)
    _behind_the_apps_back("DELETE FROM audit_event WHERE id = %s", [rows[2].id])
    assert verify(org.pk) == {"intact": False, "entries_checked": 2, "first_broken_id": None}


def test_verify_seals_pending_entries_first_and_each_org_has_its_own_chain(org, other_org, admin):
    organization_update(org=org, by=admin, name="One")
    with transaction.atomic():
        record(org=other_org, action="organization.updated", target=other_org)
    assert verify(org.pk) == {"intact": True, "entries_checked": 1, "first_broken_id": None}
    assert entries(other_org)[0].hash is None  # another org's chain is not touched
    assert verify(other_org.pk)["entries_checked"] == 1
    assert AuditChain.objects.get(organization_id=other_org.pk).last_seq == 1


def test_sealing_twice_seals_nothing_more(org, admin):
    _sealed_entries(org, admin, 2)
    assert seal(org.pk) == 0
    assert AuditChain.objects.get(organization_id=org.pk).last_seq == 2


def test_the_purge_removes_old_entries_only_and_the_chain_still_verifies(org, admin, settings):
    settings.AUDIT_RETENTION_DAYS = 400
    rows = _sealed_entries(org, admin, 4)
    # Two entries are 401 days old: written so directly, as if recorded then (the guard allows inserts).
    old = timezone.now() - timedelta(days=401)
    _behind_the_apps_back("UPDATE audit_event SET occurred_at = %s WHERE chain_seq <= 2 AND organization_id = %s",
                          [old, org.pk])
    _behind_the_apps_back("UPDATE audit_event SET hash = NULL, chain_seq = NULL, prev_hash = NULL "
                          "WHERE organization_id = %s", [org.pk])
    AuditChain.objects.filter(organization_id=org.pk).delete()
    seal(org.pk)
    assert chain.purge() == 2
    kept = entries(org)
    assert [row.id for row in kept] == [row.id for row in rows[2:]]
    assert verify(org.pk) == {"intact": True, "entries_checked": 2, "first_broken_id": None}
    assert chain.purge() == 0
    # Removing the oldest kept entry behind the app's back still shows, purge or no purge.
    _behind_the_apps_back("DELETE FROM audit_event WHERE id = %s", [kept[0].id])
    assert verify(org.pk)["first_broken_id"] == str(kept[1].id)


def test_an_explicit_actor_is_recorded(org, admin):
    with acting_as(user_actor(admin)), transaction.atomic():
        record(org=org, action="organization.updated", target=org)
    [entry] = entries(org)
    assert (entry.actor_type, entry.actor_id, entry.actor_label) == ("user", str(admin.pk), admin.email)
