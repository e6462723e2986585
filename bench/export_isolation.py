"""CSV exports never hold the web tier: org A's `GET /v1/me` p99 while org B starts export after export and stalls
each one (reads its status line, then nothing: a client that stopped reading), on the project's gunicorn
(gunicorn.conf.py: 2 sync workers per core).

A download holds a sync worker for as long as it lasts, and a stalled one until WEB_TIMEOUT kills its worker. Before
the caps, B's first few stalled downloads held every worker and A got no answer until gunicorn killed them. Now an
export needs a place, 1 per organization and one worker in four overall (core/csvexport.py): B's others are 429 at
once and nothing is queried. Goal: A's p99 < 250 ms with no error. Rows: A alone first (the baseline), then A while
B stalls downloads.

B's contacts (BENCH_EXPORT_CONTACTS, 20,000 by default, with 2 KB of notes each: about 40 MB of CSV, far more than
the socket buffers, so a stalled download blocks its worker) are seeded once in a database of its own on
DATABASE_URL's server, and kept between runs; the bench's own Redis as bench.api_reads has it. Rate limits are
raised for the run (A's sequential reads would pass 600 a minute).
"""

import os
import socket
import threading
import time

from bench import api_reads
from bench.tenants import two_tenants
from bench.webhook_tests import GOAL_MS, SECONDS, alone_and_during

CONTACTS = int(os.environ.get("BENCH_EXPORT_CONTACTS", 20_000))
STALLERS = 8  # B's clients, each starting an export again 0.5 s after a 429
DATABASE = "voiceagent_bench_export_isolation"


def _prepare() -> tuple[str, str]:
    """Org A and org B with a read key each, B with CONTACTS contacts; returns the two keys."""
    keys = two_tenants(api_reads._database_url(DATABASE), scope="read")
    from contacts.models import Contact

    (_, key_a), (org_b, key_b) = keys
    have = Contact.objects.filter(organization=org_b).count()
    if have < CONTACTS:
        started = time.perf_counter()
        notes = "n" * 2000
        for start in range(have, CONTACTS, 5000):
            Contact.objects.bulk_create(
                Contact(organization=org_b, phone_number=f"+1415{i:07d}", phone_digits=f"1415{i:07d}",
                        name=f"Contact {i}", notes=notes, source="api")
                for i in range(start, min(start + 5000, CONTACTS))
            )
        print(f"  seeded {CONTACTS - have:,} contacts in {time.perf_counter() - started:.0f} s", flush=True)
    return key_a, key_b


def _stalled_export(port: int, key: str) -> tuple[int, socket.socket | None]:
    """Starts an export of B's contacts and reads its status line only; the socket is kept (not read) when it
    answered 200."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=15)
    try:
        sock.sendall(f"GET /v1/exports/contacts.csv HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
                     "Connection: close\r\n\r\n".encode())
        status = int(sock.recv(64).split(b" ", 2)[1])
    except (OSError, IndexError, ValueError):
        sock.close()
        return 0, None
    if status != 200:
        sock.close()
        return status, None
    return status, sock


def main():
    key_a, key_b = _prepare()
    port, redis_port = api_reads._free_port(), api_reads._free_port()
    redis = api_reads._start_redis(redis_port)
    env = {**os.environ, "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0", "ALLOWED_HOSTS": "127.0.0.1,localhost"}
    server = api_reads._start_gunicorn(env, port)
    started: list[int] = []
    held: list[socket.socket] = []
    stop = threading.Event()

    def stall():
        while not stop.is_set():
            status, sock = _stalled_export(port, key_b)
            started.append(status)
            if sock is not None:
                held.append(sock)  # never read again until the run ends
            stop.wait(0.5)

    try:
        alone, during = alone_and_during(port, key_a, [threading.Thread(target=stall) for _ in range(STALLERS)], stop)
    finally:
        for sock in held:
            sock.close()
        server.terminate()
        server.wait(timeout=30)
        redis.kill()

    workers = os.environ.get("WEB_WORKERS", f"{2 * (os.cpu_count() or 1)} (the default)")
    print(f"gunicorn.conf.py: {workers} sync workers; org A: one client, sequential GET /v1/me, {SECONDS:.0f} s a row; "
          f"org B: {CONTACTS:,} contacts")
    print(f"{'org A GET /v1/me':56} {'n':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'errors':>7}")
    for name, row in (("alone", alone), (f"while org B stalls exports ({STALLERS} clients)", during)):
        print(f"{name:56} {row['n']:6d} {row['p50_ms']:8.1f} {row['p99_ms']:8.1f} {row['max_ms']:8.1f} "
              f"{row['errors']:7d}")
    statuses: dict[int, int] = {}
    for status in started:
        statuses[status] = statuses.get(status, 0) + 1
    print(f"org B's exports: {len(started)} started, by status {dict(sorted(statuses.items()))} "
          f"({len(held)} stalled downloads held a worker)")
    ok = during["p99_ms"] < GOAL_MS and during["errors"] == 0
    print(f"goal: org A's p99 < {GOAL_MS} ms with no error while B stalls exports: {'OK' if ok else 'MISSED'}")
