"""Each organization's hash chain over its entries: sealing (right after commit, in order), verifying, purging.

An entry is sealed once: it gets the next position of its org's chain (`chain_seq`), the previous entry's hash
(`prev_hash`; 64 zeros for the first) and `hash` = sha256(canonical_bytes(entry)). Sealing takes a per-org
advisory lock, so sealers of one org take turns while the writers themselves never wait for the chain: they only
insert. Entries are sealed in the order they are found committed (occurred_at, then id), which is the chain's
order; `AuditChain` keeps the head, so removing the newest entries shows as well as changing any.
"""

import hashlib
import json
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from .models import AuditChain, AuditEvent

# The first key of the two-key advisory lock space, so these locks never meet another feature's.
LOCK_CLASS = 27_0001
SEAL_BATCH = 1000


def timestamp(value: datetime) -> str:
    """The one text form of `occurred_at`, in the API and in the hashed bytes: UTC, milliseconds, `Z` (record()
    stores whole milliseconds, so this text is the stored value exactly)."""
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def canonical_bytes(entry: AuditEvent) -> bytes:
    """What `hash` is the sha256 of (docs/api.md#audit-trail): this JSON object with its keys sorted, no spaces,
    UTF-8 (not \\u-escaped)."""
    document = {
        "id": str(entry.id),
        "organization_id": str(entry.organization_id),
        "chain_seq": entry.chain_seq,
        "prev_hash": entry.prev_hash,
        "occurred_at": timestamp(entry.occurred_at),
        "action": entry.action,
        "actor": {"type": entry.actor_type, "id": entry.actor_id, "label": entry.actor_label},
        "target": {"type": entry.target_type, "id": entry.target_id, "label": entry.target_label},
        "changes": entry.changes,
        "ip": entry.ip,
        "user_agent": entry.user_agent,
        "request_id": entry.request_id,
    }
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def entry_hash(entry: AuditEvent) -> str:
    return hashlib.sha256(canonical_bytes(entry)).hexdigest()


def _lock(org_id) -> AuditChain:
    """Takes the org's chain lock until the transaction ends and returns its head. The caller holds a transaction."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [LOCK_CLASS, str(org_id)])
    chain = AuditChain.objects.filter(organization_id=org_id).first()
    return chain if chain is not None else AuditChain(organization_id=org_id)


def seal(org_id, *, batch: int = SEAL_BATCH) -> int:
    """Seals the org's committed, unsealed entries into its chain, in order; returns how many. Idempotent: a
    concurrent sealer of the same org waits for the lock and then finds nothing left (or only what came since)."""
    sealed = 0
    while True:
        with transaction.atomic():
            chain = _lock(org_id)
            rows = list(
                AuditEvent.objects.filter(organization_id=org_id, hash__isnull=True).order_by("occurred_at", "id")[
                    :batch
                ]
            )
            if not rows:
                return sealed
            for row in rows:
                chain.last_seq += 1
                row.chain_seq, row.prev_hash = chain.last_seq, chain.last_hash
                row.hash = chain.last_hash = entry_hash(row)
            AuditEvent.objects.bulk_update(rows, ["chain_seq", "prev_hash", "hash"])
            chain.save()
            sealed += len(rows)
        if len(rows) < batch:
            return sealed


def orgs_with_unsealed(*, older_than_seconds: float = 0, limit: int = 1000) -> list:
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    return list(
        AuditEvent.objects.filter(hash__isnull=True, occurred_at__lte=cutoff)
        .values_list("organization_id", flat=True).distinct()[:limit]
    )


def verify(org_id) -> dict:
    """Seals what is pending, then walks the org's chain from where the retention purge cut it to its head:
    `{"intact", "entries_checked", "first_broken_id"}`. The first entry whose position, link or hash is wrong
    is named; when the entries are fine but the head says more were sealed (the newest were removed), intact is
    false and no entry is named."""
    seal(org_id)
    chain = AuditChain.objects.filter(organization_id=org_id).first() or AuditChain(organization_id=org_id)
    expected_seq, previous, checked = chain.purged_through_seq + 1, chain.purged_through_hash, 0
    rows = AuditEvent.objects.filter(organization_id=org_id, chain_seq__isnull=False).order_by("chain_seq")
    for row in rows.iterator(chunk_size=2000):
        checked += 1
        if row.chain_seq != expected_seq or row.prev_hash != previous or row.hash != entry_hash(row):
            return {"intact": False, "entries_checked": checked, "first_broken_id": str(row.id)}
        expected_seq, previous = expected_seq + 1, row.hash
    intact = expected_seq - 1 == chain.last_seq and previous == chain.last_hash
    return {"intact": intact, "entries_checked": checked, "first_broken_id": None}


def purge(*, now: datetime | None = None) -> int:
    """Deletes entries older than AUDIT_RETENTION_DAYS, each org's oldest first and only whole prefixes of its
    chain, recording where the chain now starts. The only DELETE the table's trigger lets through: it declares
    its cutoff in `audit.purge_before`, for this transaction only, and the trigger refuses any row newer."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.AUDIT_RETENTION_DAYS)
    org_ids = list(
        AuditEvent.objects.filter(occurred_at__lt=cutoff, hash__isnull=False)
        .values_list("organization_id", flat=True).distinct()
    )
    purged = 0
    for org_id in org_ids:
        with transaction.atomic():
            chain = _lock(org_id)
            first_kept = (
                AuditEvent.objects.filter(organization_id=org_id, occurred_at__gte=cutoff, chain_seq__isnull=False)
                .order_by("chain_seq").values_list("chain_seq", flat=True).first()
            )
            through = first_kept - 1 if first_kept is not None else chain.last_seq
            if through <= chain.purged_through_seq:
                continue
            last_hash = (
                AuditEvent.objects.filter(organization_id=org_id, chain_seq=through).values_list("hash", flat=True)
                .first()
            )
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('audit.purge_before', %s, true)", [cutoff.isoformat()])
            purged += AuditEvent.objects.filter(organization_id=org_id, chain_seq__lte=through).delete()[0]
            chain.purged_through_seq, chain.purged_through_hash = through, last_hash or chain.last_hash
            chain.save()
    return purged
