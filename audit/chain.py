"""Each organization's hash chain over its entries: sealing (right after commit, in order), verifying, purging.

An entry is sealed once: it gets the next position of its org's chain (`chain_seq`), the previous entry's hash
(`prev_hash`; 64 zeros for the first), `hash` = sha256(canonical_bytes(entry)) and `chain_mac`, a MAC of that
hash under a key outside the database (audit.keys); `content_mac`, a MAC of its content, was set when it was
written. Sealing takes a per-org transaction-level advisory lock with a *try*: a sealer that finds another at work
returns at once (its caller asks again later), so no task or request ever waits on the chain and nothing is held
across transactions (PgBouncer in transaction mode). Entries are sealed in the order they are found committed
(occurred_at, then id), which is the chain's order; `AuditChain` keeps the head, so removing the newest entries
shows as well as changing any.

Verifying reads the chain in keyset batches (chain_seq > last seen), each its own short query: no cursor is held.
A verify request checks only what came after the org's checkpoint (`AuditChain.verified_through_*`), at most
AUDIT_VERIFY_MAX_ENTRIES entries; a verification job (audit.tasks.run_verification) re-checks everything.
"""

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from . import keys
from .models import GENESIS_HASH, AuditChain, AuditEvent, AuditVerification

# The first key of the two-key advisory lock space, so these locks never meet another feature's: sealing (and the
# purge, inside audit_purge()) and verify requests.
LOCK_CLASS = 27_0001
VERIFY_LOCK_CLASS = 27_0002
SEAL_BATCH = 1000
VERIFY_BATCH = 2000
# No entry younger than this is ever deleted: audit_purge() and the table's guard refuse it (migrations/0002),
# whatever AUDIT_RETENTION_DAYS says.
MIN_RETENTION_DAYS = 30


def timestamp(value: datetime) -> str:
    """The one text form of `occurred_at`, in the API and in the hashed bytes: UTC, milliseconds, `Z` (record()
    stores whole milliseconds, so this text is the stored value exactly)."""
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _content(entry) -> dict:
    return {
        "id": str(entry.id),
        "organization_id": str(entry.organization_id),
        "occurred_at": timestamp(entry.occurred_at),
        "action": entry.action,
        "actor": {"type": entry.actor_type, "id": entry.actor_id, "label": entry.actor_label},
        "target": {"type": entry.target_type, "id": entry.target_id, "label": entry.target_label},
        "changes": entry.changes,
        "ip": entry.ip,
        "user_agent": entry.user_agent,
        "request_id": entry.request_id,
    }


def _dump(document: dict) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def canonical_bytes(entry: AuditEvent) -> bytes:
    """What `hash` is the sha256 of (docs/api.md#audit-trail): this JSON object with its keys sorted, no spaces,
    UTF-8 (not \\u-escaped)."""
    return _dump({**_content(entry), "chain_seq": entry.chain_seq, "prev_hash": entry.prev_hash})


def content_mac(entry: AuditEvent) -> str:
    """The MAC `record` writes with the entry: over its canonical bytes without the chain's two fields."""
    return keys.mac(b"content", _dump(_content(entry)))


def chain_mac(entry_hash_hex: str) -> str:
    """The MAC the sealer writes: over the entry's hash, which covers its content, position and link."""
    return keys.mac(b"chain", entry_hash_hex.encode())


def entry_hash(entry: AuditEvent) -> str:
    return hashlib.sha256(canonical_bytes(entry)).hexdigest()


def _try_lock(lock_class: int, org_id) -> bool:
    """Takes the org's lock of `lock_class` until the transaction ends, if free; never waits. The caller holds a
    transaction (a transaction-level lock: nothing survives into the next transaction of a pooled connection)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s, hashtext(%s))", [lock_class, str(org_id)])
        return cursor.fetchone()[0]


def _head(org_id) -> AuditChain:
    chain = AuditChain.objects.filter(organization_id=org_id).first()
    return chain if chain is not None else AuditChain(organization_id=org_id)


def seal_batches(org_id, *, max_batches: int | None = None, batch: int = SEAL_BATCH) -> tuple[int, bool]:
    """Seals the org's committed, unsealed entries into its chain, in order, a batch per transaction: (how many,
    done). Not done: another sealer holds the org's chain (this one did not wait), or `max_batches` were sealed
    and more may be pending. Idempotent: a second run finds nothing left (or only what came since)."""
    sealed = batches = 0
    while max_batches is None or batches < max_batches:
        with transaction.atomic():
            if not _try_lock(LOCK_CLASS, org_id):
                return sealed, False
            chain = _head(org_id)
            rows = list(
                AuditEvent.objects.filter(organization_id=org_id, hash__isnull=True).order_by("occurred_at", "id")[
                    :batch
                ]
            )
            if not rows:
                return sealed, True
            for row in rows:
                chain.last_seq += 1
                row.chain_seq, row.prev_hash = chain.last_seq, chain.last_hash
                row.hash = chain.last_hash = entry_hash(row)
                row.chain_mac = chain_mac(row.hash)
            AuditEvent.objects.bulk_update(rows, ["chain_seq", "prev_hash", "hash", "chain_mac"])
            chain.save()
            sealed += len(rows)
            batches += 1
        if len(rows) < batch:
            return sealed, True
    return sealed, False


def seal(org_id, *, batch: int = SEAL_BATCH) -> int:
    """Seals what is pending for the org (all of it, unless another sealer is at work); returns how many."""
    return seal_batches(org_id, batch=batch)[0]


def orgs_with_unsealed(*, older_than_seconds: float = 0, limit: int = 1000) -> list:
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    return list(
        AuditEvent.objects.filter(hash__isnull=True, occurred_at__lte=cutoff)
        .values_list("organization_id", flat=True).distinct()[:limit]
    )


_WALKED = ("id", "organization_id", "occurred_at", "action", "actor_type", "actor_id", "actor_label", "target_type",
           "target_id", "target_label", "changes", "ip", "user_agent", "request_id", "chain_seq", "prev_hash", "hash",
           "content_mac", "chain_mac")


@dataclass
class Walk:
    """Where a check of one chain stands: the last position and hash found good, how many entries it hashed, and
    the first entry that failed (its id), if any."""

    seq: int
    hash: str
    hashed: int = 0
    broken_id: str | None = None

    def step(self, org_id, *, through_seq: int, limit: int) -> bool:
        """Checks up to `limit` entries after `self.seq`, through position `through_seq`, in one query (keyset:
        chain_seq > the last seen). True when it reached `through_seq`, found a break, or ran out of entries."""
        # Plain values, not model instances: building those is most of a walk's cost.
        rows = [SimpleNamespace(**values) for values in (
            AuditEvent.objects.filter(organization_id=org_id, chain_seq__gt=self.seq, chain_seq__lte=through_seq)
            .order_by("chain_seq").values(*_WALKED)[:limit]
        )]
        for row in rows:
            self.hashed += 1
            if (row.chain_seq != self.seq + 1 or row.prev_hash != self.hash or row.hash != entry_hash(row)
                    or row.content_mac != content_mac(row) or row.chain_mac != chain_mac(row.hash)):
                self.broken_id = str(row.id)
                return True
            self.seq, self.hash = row.chain_seq, row.hash
        return len(rows) < limit or self.seq >= through_seq

    def skip_purged(self, chain: AuditChain) -> None:
        """The purge cut the chain past where this walk stands (it ran meanwhile): go on from its cut."""
        if chain.purged_through_seq > self.seq:
            self.seq, self.hash = chain.purged_through_seq, chain.purged_through_hash


def _entries_beyond_head(org_id) -> bool:
    """Whether sealed entries lie past the recorded head (a head removed or moved back): one statement, so the head
    and the entries are read in one snapshot."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM audit_event WHERE organization_id = %s AND chain_seq > "
            "COALESCE((SELECT last_seq FROM audit_chain WHERE organization_id = %s), 0))",
            [org_id, org_id],
        )
        return cursor.fetchone()[0]


def _head_holds(walk: Walk, org_id, head_seq: int, head_hash: str) -> bool:
    return walk.seq == head_seq and walk.hash == head_hash and not _entries_beyond_head(org_id)


def verify(org_id) -> dict:
    """The whole chain, at once, in this process (a verification job, tests): seals what is pending, then walks
    the org's chain from where the retention purge cut it to its head: `{"intact", "entries_checked",
    "first_broken_id"}`. The first entry whose position, link, hash or MACs are wrong is named; when the entries
    are fine but the head says more were sealed (the newest were removed), intact is false and no entry is named."""
    seal(org_id)
    chain = _head(org_id)
    walk = Walk(chain.purged_through_seq, chain.purged_through_hash)
    while not walk.step(org_id, through_seq=chain.last_seq, limit=VERIFY_BATCH):
        pass
    if walk.broken_id:
        return {"intact": False, "entries_checked": walk.hashed, "first_broken_id": walk.broken_id}
    return {"intact": _head_holds(walk, org_id, chain.last_seq, chain.last_hash), "entries_checked": walk.hashed,
            "first_broken_id": None}


class VerificationBusy(Exception):
    """Another verify request of the organization is checking its chain right now."""


def _advance_checkpoint(org_id, *, seq: int, hash_: str, lower: bool = False) -> None:
    """Moves the org's checkpoint to (seq, hash): only forward, or (`lower`, after a break was found before it)
    only back."""
    rows = AuditChain.objects.filter(organization_id=org_id)
    rows = rows.filter(verified_through_seq__gt=seq) if lower else rows.filter(verified_through_seq__lt=seq)
    rows.update(verified_through_seq=seq, verified_through_hash=hash_, verified_at=timezone.now())


def verify_recent(org_id, *, limit: int | None = None) -> dict:
    """`GET /v1/audit-events/verify`: bounded work. Seals at most one batch of what is pending, then checks the
    entries after the org's checkpoint, at most `limit` (AUDIT_VERIFY_MAX_ENTRIES) of them, and moves the
    checkpoint to the last good one. One per organization at a time (VerificationBusy otherwise).

    `intact`: true when every entry through the head holds (the ones before the checkpoint as found by earlier
    checks), false at a break, null when more than `limit` were unverified (`complete` false: ask again, or start a
    verification job). `entries_checked` counts positions from the purge's cut through the last entry checked
    (what the verdict covers, as before checkpoints), `entries_hashed` what this request hashed."""
    limit = limit or settings.AUDIT_VERIFY_MAX_ENTRIES
    seal_batches(org_id, max_batches=1)
    with transaction.atomic():
        if not _try_lock(VERIFY_LOCK_CLASS, org_id):
            raise VerificationBusy
        chain = _head(org_id)
        if chain.verified_through_seq > chain.purged_through_seq:
            walk = Walk(chain.verified_through_seq, chain.verified_through_hash)
        else:
            walk = Walk(chain.purged_through_seq, chain.purged_through_hash)
        done = False
        while not done and walk.hashed < limit:
            done = walk.step(org_id, through_seq=chain.last_seq, limit=min(VERIFY_BATCH, limit - walk.hashed))
        done = done or walk.seq >= chain.last_seq
        if walk.seq > chain.verified_through_seq:
            _advance_checkpoint(org_id, seq=walk.seq, hash_=walk.hash)
    checked = walk.seq - chain.purged_through_seq + (1 if walk.broken_id else 0)
    if walk.broken_id:
        intact = False
    elif done:
        intact = _head_holds(walk, org_id, chain.last_seq, chain.last_hash)
    else:
        intact = None
    return {
        "intact": intact, "complete": bool(walk.broken_id) or done, "entries_checked": checked,
        "entries_hashed": walk.hashed, "first_broken_id": walk.broken_id, "verified_through_seq": walk.seq,
        "head_seq": chain.last_seq,
    }


# -- verification jobs: a full re-check in a worker, polled by the client -------------------------------------------

class VerificationRunning(Exception):
    def __init__(self, job: AuditVerification):
        super().__init__("a verification of this organization is running")
        self.job = job


def verification_start(*, org_id, stale_after_seconds: float) -> AuditVerification:
    """Creates a queued verification job for the org; VerificationRunning with the active one if there is one. An
    active job without progress for `stale_after_seconds` (its task lost with the broker) is failed and replaced."""
    now = timezone.now()
    with transaction.atomic():
        active = AuditVerification.objects.select_for_update().filter(
            organization_id=org_id, status__in=AuditVerification.ACTIVE).first()
        if active is not None:
            if active.updated_at > now - timedelta(seconds=stale_after_seconds):
                raise VerificationRunning(active)
            active.status, active.error, active.finished_at, active.updated_at = "failed", "abandoned", now, now
            active.save(update_fields=["status", "error", "finished_at", "updated_at"])
        try:
            with transaction.atomic():
                return AuditVerification.objects.create(organization_id=org_id, created_at=now, updated_at=now)
        except IntegrityError:  # the partial unique index: a concurrent start won the race
            pass
    raise VerificationRunning(AuditVerification.objects.filter(
        organization_id=org_id, status__in=AuditVerification.ACTIVE).first())


def verification_run(job_id, *, batch: int = VERIFY_BATCH) -> AuditVerification | None:
    """Runs (or resumes) one job: a batch per short query, its progress saved after each, so a task redelivered
    after its worker died goes on where it was. The end moves the org's checkpoint: to the head when intact,
    back to just before the break when not (so verify requests report it too)."""
    job = AuditVerification.objects.filter(pk=job_id).first()
    if job is None or job.status not in AuditVerification.ACTIVE:
        return job
    org_id = job.organization_id
    if job.status == AuditVerification.QUEUED:
        seal(org_id)
        chain = _head(org_id)
        now = timezone.now()
        job.status, job.started_at, job.updated_at = AuditVerification.RUNNING, now, now
        job.head_seq = chain.last_seq
        job.checked_through_seq, job.checked_through_hash = chain.purged_through_seq, chain.purged_through_hash
        job.save(update_fields=["status", "started_at", "updated_at", "head_seq", "checked_through_seq",
                                "checked_through_hash"])
    walk = Walk(job.checked_through_seq, job.checked_through_hash, hashed=job.entries_checked)
    while True:
        walk.skip_purged(_head(org_id))
        done = walk.step(org_id, through_seq=job.head_seq, limit=batch)
        AuditVerification.objects.filter(pk=job.pk).update(
            checked_through_seq=walk.seq, checked_through_hash=walk.hash, entries_checked=walk.hashed,
            updated_at=timezone.now())
        if done:
            break
    if walk.broken_id:
        intact = False
    elif walk.seq != job.head_seq:
        intact = False  # entries missing before the head the job started from
    else:
        # The head may have moved on since the job started, never back (that is the newest entries removed).
        intact = _head(org_id).last_seq >= job.head_seq and not _entries_beyond_head(org_id)
    with transaction.atomic():
        if intact:
            _advance_checkpoint(org_id, seq=walk.seq, hash_=walk.hash)
        else:
            _advance_checkpoint(org_id, seq=walk.seq, hash_=walk.hash, lower=True)
        now = timezone.now()
        AuditVerification.objects.filter(pk=job.pk).update(
            status=AuditVerification.SUCCEEDED, intact=intact, first_broken_id=walk.broken_id, finished_at=now,
            updated_at=now, entries_checked=walk.hashed)
    job.refresh_from_db()
    return job


# -- signed heads ---------------------------------------------------------------------------------------------------

class HeadBroken(Exception):
    """The recorded head is not the hash of a sealed entry with a valid MAC: it is not signed."""


def signed_head(org_id) -> dict:
    """The org's chain head now, signed with Ed25519 (docs/api.md#audit-trail, "Signed heads"). The payload is the
    canonical JSON of {organization_id, seq, hash, entry_id, signed_at}; the signature is over its UTF-8 bytes."""
    seal_batches(org_id, max_batches=1)
    chain = _head(org_id)
    entry_id = None
    if chain.last_seq:
        entry = AuditEvent.objects.filter(organization_id=org_id, chain_seq=chain.last_seq).first()
        if entry is None or entry.hash != chain.last_hash or entry.chain_mac != chain_mac(entry.hash):
            raise HeadBroken
        entry_id = str(entry.id)
    payload = {
        "organization_id": str(org_id), "seq": chain.last_seq, "hash": chain.last_hash or GENESIS_HASH,
        "entry_id": entry_id, "signed_at": timestamp(timezone.now()),
    }
    text = _dump(payload).decode()
    return {**payload, "payload": text, "algorithm": "ed25519", "signature": keys.sign(text.encode()),
            "public_key": keys.public_key(), "key_id": keys.public_key_id()}


# -- retention ------------------------------------------------------------------------------------------------------

def purge(*, now: datetime | None = None) -> int:
    """Deletes entries older than AUDIT_RETENTION_DAYS (at least MIN_RETENTION_DAYS), each org's oldest first and
    only whole prefixes of its chain, recording where the chain now starts. Through audit_purge(), a SECURITY
    DEFINER function (migrations/0002): the only way past the table's guard, which no session setting opens."""
    days = max(settings.AUDIT_RETENTION_DAYS, MIN_RETENTION_DAYS)
    cutoff = (now or timezone.now()) - timedelta(days=days)
    org_ids = list(
        AuditEvent.objects.filter(occurred_at__lt=cutoff, hash__isnull=False)
        .values_list("organization_id", flat=True).distinct()
    )
    purged = 0
    for org_id in org_ids:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT audit_purge(%s, %s)", [org_id, cutoff])
            purged += cursor.fetchone()[0]
    return purged
