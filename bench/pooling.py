"""`/v1/me` and `GET /v1/calls?limit=50` through PgBouncer in transaction mode against direct connections, and both
against the stack's ceiling served from bench/bare_settings.py (no project middleware, no access log), in one run.

Three gunicorns of the same command (`gunicorn voiceagent.wsgi` from the root: gunicorn.conf.py's workers and worker
class) run side by side, only one under load at a time:
- the ceiling: DJANGO_SETTINGS_MODULE=bench.bare_settings, WEB_ACCESS_LOG="" (no access log);
- direct: the project's settings (bench.settings), DATABASE_URL naming PostgreSQL;
- pooled: the same, DATABASE_URL naming Debian's PgBouncer in transaction mode (scripts/pgbouncer.py) in front of
  that server, and DATABASE_POOLING=transaction.
Each figure is a round's: the ceiling, then direct and pooled (taking turns going first), each for BENCH_SECONDS with
16 connections (wrk when installed, else Python client processes); the row shown is the round with the median ratio,
of BENCH_ROUNDS rounds.
The bench database and its seeded rows are bench.api_reads' (10,000 calls).

Goals (issue 38): pooled within 10% of direct (ratio >= 0.9) for both endpoints; `/v1/me` >= 0.55 of the ceiling,
direct and pooled.

Each run also reads, from /proc, the CPU time its server side used (the gunicorn's workers, PgBouncer, the bench
database's PostgreSQL backends, the bench's redis-server) per request answered: on a machine shared with other work,
requests/s count every moment another process held a core, CPU time only the work done. The CPU rows compare those
(ceiling's CPU per request / the endpoint's, and direct's / pooled's: the throughput each would have on cores of its
own, the client's share left out).
"""

import http.client
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from bench.api_reads import (
    CLIENTS,
    CONNECTIONS,
    ROOT,
    ROUNDS,
    SECONDS,
    _concurrent,
    _free_port,
    _start_redis,
    prepare,
)

sys.path.insert(0, str(ROOT))
from scripts.pgbouncer import executable, from_url  # noqa: E402

_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process `pid` (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _server_pids(server, extra=()) -> list[int]:
    """The gunicorn's workers, `extra` (PgBouncer, redis-server) and the bench database's PostgreSQL backends (when
    the server runs on this machine: /proc shows them)."""
    import psycopg

    children = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True).stdout.split()
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        backends = [row[0] for row in conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")]
    return [int(pid) for pid in children] + list(extra) + backends


def _measured(port, path, headers, server, extra=()) -> dict:
    """`_concurrent`, with the server side's CPU microseconds per request (`cpu_us`, see the module)."""
    pids = _server_pids(server, extra)
    before = {pid: _cpu_seconds(pid) for pid in pids}
    row = _concurrent(port, path, headers)
    used = 0.0
    for pid, start in before.items():
        end = _cpu_seconds(pid)
        if start is not None and end is not None:
            used += end - start
    return {**row, "cpu_us": 1e6 * used / max(1.0, row["rps"] * SECONDS)}


def _start(env: dict, port: int, log_path) -> subprocess.Popen:
    """The project's gunicorn command from the root (gunicorn.conf.py applies), ready once /bench/bare answers; up to
    two minutes, as three servers booting beside other work on a 2-core machine take a while."""
    log = open(log_path, "wb")  # noqa: SIM115 - the server's; left to the process
    server = subprocess.Popen(  # noqa: S603 - our own command
        [str(ROOT / ".venv/bin/gunicorn"), "voiceagent.wsgi", "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and server.poll() is None:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/bench/bare")
            if conn.getresponse().status == 200:
                return server
        except OSError:
            pass
        time.sleep(0.2)
    server.kill()
    raise RuntimeError(f"gunicorn did not start:\n{Path(log_path).read_text()[-3000:]}")


def _answers(port, path, headers, log_path) -> None:
    """Refuses to measure a server whose answer is not a 200 (one that cannot reach its database answers 503s fast,
    and a rate of those is no figure)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    if response.status != 200:
        raise RuntimeError(f"GET {path} answered {response.status} {response.read()[:300]!r}:\n"
                           f"{Path(log_path).read_text()[-3000:]}")


def server_env(redis_port: int) -> dict:
    """The environment every bench gunicorn runs with: this process's (the bench database), the bench's own
    redis-server, a runtime token and loopback hosts."""
    from django.conf import settings

    return {
        **os.environ,
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "AGENT_RUNTIME_TOKEN": settings.AGENT_RUNTIME_TOKEN or "bench-runtime-token-0123456789-abcdefghijkl",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
    }


def _stop(server) -> None:
    server.terminate()
    try:
        server.wait(timeout=20)
    except Exception:  # noqa: BLE001 - a server that does not stop is killed
        server.kill()


def main():
    if executable() is None:
        print("pgbouncer is not installed (Debian: apt-get install pgbouncer): bench.pooling skipped")
        return
    org, plaintext, _ = prepare()
    database_url = os.environ["DATABASE_URL"]  # the bench database, set by prepare()
    redis_port = _free_port()
    redis = _start_redis(redis_port)
    pooler = from_url(database_url, pool_size=8).start()
    common = server_env(redis_port)
    ports = {name: _free_port() for name in ("bare", "direct", "pooled")}
    logs = Path(tempfile.mkdtemp(prefix="bench-pooling-"))
    servers = {}
    try:
        servers["bare"] = _start({**common, "DJANGO_SETTINGS_MODULE": "bench.bare_settings", "WEB_ACCESS_LOG": ""},
                                 ports["bare"], logs / "bare.log")
        servers["direct"] = _start(common, ports["direct"], logs / "direct.log")
        pooled_url = pooler.url(urlsplit(database_url).path.lstrip("/"))
        servers["pooled"] = _start({**common, "DATABASE_URL": pooled_url, "DATABASE_POOLING": "transaction"},
                                   ports["pooled"], logs / "pooled.log")
        auth = {"Authorization": f"Bearer {plaintext}"}
        paths = {"/v1/me": "/v1/me", "calls": "/v1/calls?limit=50"}
        for name in ("direct", "pooled"):  # warm every worker's connection and caches
            for path in paths.values():
                _answers(ports[name], path, auth, logs / f"{name}.log")
                _concurrent(ports[name], path, auth)
        _concurrent(ports["bare"], "/bench/bare", {})
        rounds = {label: [] for label in paths}
        for number in range(ROUNDS):
            for label, path in paths.items():
                bare = _measured(ports["bare"], "/bench/bare", {}, servers["bare"])
                # Direct and pooled take turns going first: a machine whose load climbs within a round would
                # otherwise always favour the same one.
                runs = {
                    "direct": lambda path=path: _measured(ports["direct"], path, auth, servers["direct"], [redis.pid]),
                    "pooled": lambda path=path: _measured(ports["pooled"], path, auth, servers["pooled"],
                                                          [redis.pid, pooler.process.pid]),
                }
                order = ("direct", "pooled") if number % 2 == 0 else ("pooled", "direct")
                measured = {name: runs[name]() for name in order}
                direct, pooled = measured["direct"], measured["pooled"]
                rounds[label].append({"bare": bare, "direct": direct, "pooled": pooled,
                                      "pooled_vs_direct": pooled["rps"] / direct["rps"],
                                      "cpu_pooled_vs_direct": direct["cpu_us"] / pooled["cpu_us"],
                                      "cpu_direct_vs_bare": bare["cpu_us"] / direct["cpu_us"],
                                      "cpu_pooled_vs_bare": bare["cpu_us"] / pooled["cpu_us"]})
    finally:
        for server in servers.values():
            _stop(server)
        pooler.stop()
        redis.kill()

    load = f"wrk, {CONNECTIONS} connections" if shutil.which("wrk") else f"{CLIENTS} Python client processes"
    workers = os.environ.get("WEB_WORKERS", "default")
    print(f"three gunicorns of gunicorn.conf.py ({workers} workers each), one loaded at a time;"
          f" {load}, {SECONDS:.0f} s each; the round with the median pooled/direct ratio of {ROUNDS};"
          f" load {' / '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'endpoint':34} {'bare/s':>8} {'direct/s':>9} {'pooled/s':>9} {'direct p99':>11} {'pooled p99':>11} "
          f"{'dir/bare':>9} {'pool/bare':>9} {'pool/dir':>9} {'errors':>7}")
    goals = []
    for label, results in rounds.items():
        row = sorted(results, key=lambda r: r["pooled_vs_direct"])[len(results) // 2]
        bare, direct, pooled = row["bare"], row["direct"], row["pooled"]
        errors = bare["errors"] + direct["errors"] + pooled["errors"]
        name = "GET /v1/me" if label == "/v1/me" else "GET /v1/calls?limit=50, 10,000 calls"
        print(f"{name:34} {bare['rps']:8.0f} {direct['rps']:9.0f} {pooled['rps']:9.0f} {direct['p99_ms']:9.1f}ms "
              f"{pooled['p99_ms']:9.1f}ms {direct['rps'] / bare['rps']:9.2f} {pooled['rps'] / bare['rps']:9.2f} "
              f"{row['pooled_vs_direct']:9.2f} {errors:7d}")
        ratios = [r["pooled_vs_direct"] for r in results]
        print(f"  pooled/direct over the rounds: {', '.join(f'{r:.2f}' for r in ratios)} "
              f"(median {statistics.median(ratios):.2f})")
        cpu = {key: statistics.median(r[key] for r in results)
               for key in ("cpu_pooled_vs_direct", "cpu_direct_vs_bare", "cpu_pooled_vs_bare")}
        print(f"  server CPU per request (median of the rounds): bare "
              f"{statistics.median(r['bare']['cpu_us'] for r in results):.0f} us, direct "
              f"{statistics.median(r['direct']['cpu_us'] for r in results):.0f} us, pooled "
              f"{statistics.median(r['pooled']['cpu_us'] for r in results):.0f} us; as ratios: dir/bare "
              f"{cpu['cpu_direct_vs_bare']:.2f}, pool/bare {cpu['cpu_pooled_vs_bare']:.2f}, pool/dir "
              f"{cpu['cpu_pooled_vs_direct']:.2f}")
        goals.append((f"{name} pooled >= 0.9 of direct", row["pooled_vs_direct"], row["pooled_vs_direct"] >= 0.9))
        if label == "/v1/me":
            for kind, figures in (("direct", direct), ("pooled", pooled)):
                ratio = figures["rps"] / bare["rps"]
                goals.append((f"/v1/me {kind} >= 0.55 of the bare ceiling", ratio, ratio >= 0.55))
    print("goals: " + "; ".join(f"{name}: {value:.2f} {'OK' if ok else 'MISSED'}" for name, value, ok in goals))


if __name__ == "__main__":
    main()
