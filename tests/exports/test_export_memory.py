"""A 200,000-row export from a real gunicorn worker: its peak resident memory (the kernel's VmHWM) grows by less than
a fixed bound, far below the size of the CSV it sends, and every row arrives, though the download lasts longer than
the worker timeout."""

import http.client
import time
from datetime import UTC, datetime

import psutil
import pytest

from tests.factories import make_key
from tests.support.bulk_calls import insert_calls
from tests.support.gunicorn import running_gunicorn

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROWS = 200_000
PEAK_GROWTH_BOUND = 30 * 1024 * 1024  # bytes (measured: 10 MB); the CSV is about 70 MB, so a buffered one cannot pass
# Shorter than the export takes: the worker must prove it is alive while it streams (core/liveness.py), or gunicorn
# kills it mid-download.
WEB_TIMEOUT = "10"


def _peak_rss(pid: int) -> int:
    """The process's peak resident set size so far, in bytes (VmHWM in /proc/<pid>/status)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def _worker_pid(port: int) -> int:
    [master] = [p for p in psutil.Process().children() if f"127.0.0.1:{port}" in " ".join(p.cmdline())]
    [worker] = master.children()
    return worker.pid


def _get(port: int, path: str, key: str):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    connection.request("GET", path, headers={"Authorization": f"Bearer {key}"})
    return connection, connection.getresponse()


def test_a_200000_row_export_stays_under_a_fixed_memory_bound(org, admin, tmp_path):
    insert_calls(org.pk, ROWS, newest=datetime(2026, 11, 20, tzinfo=UTC))
    key = make_key(org, scope="read", admin=admin)[1]
    with running_gunicorn(tmp_path / "gunicorn.log", WEB_TIMEOUT=WEB_TIMEOUT) as port:
        pid = _worker_pid(port)
        connection, warm = _get(port, "/v1/exports/calls.csv?since=2030-01-01T00:00:00Z", key)  # code paths loaded
        assert warm.status == 200 and warm.read().count(b"\r\n") == 1
        connection.close()
        before = _peak_rss(pid)

        started = time.monotonic()
        connection, response = _get(port, "/v1/exports/calls.csv", key)
        assert response.status == 200 and response.getheader("Content-Type") == "text/csv; charset=utf-8"
        first = response.read1(65536)
        first_byte = time.monotonic() - started
        lines, size = first.count(b"\r\n"), len(first)
        while chunk := response.read1(65536):
            lines += chunk.count(b"\r\n")
            size += len(chunk)
        elapsed = time.monotonic() - started
        connection.close()
        growth = _peak_rss(pid) - before

    print(f"\n{ROWS:,} rows, {size / 1e6:.0f} MB of CSV: first byte {first_byte * 1000:.0f} ms, "
          f"all in {elapsed:.1f} s; worker peak RSS {before / 1e6:.0f} MB before, grew {growth / 1e6:.1f} MB")
    assert lines == ROWS + 1
    assert size > 2 * PEAK_GROWTH_BOUND  # the bound is well below what buffering the response would take
    assert growth < PEAK_GROWTH_BOUND
