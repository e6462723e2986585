"""`/v1/me` and `GET /v1/calls?limit=50` through PgBouncer in transaction mode against direct connections, and both
against the stack's ceiling served from bench/bare_settings.py (no project middleware, no access log), in one run.

Three gunicorns of the same command (`gunicorn voiceagent.wsgi` from the root: gunicorn.conf.py's workers and worker
class) run side by side, only one under load at a time:
- the ceiling: DJANGO_SETTINGS_MODULE=bench.bare_settings, WEB_ACCESS_LOG="" (no access log);
- direct: the project's settings (bench.settings), DATABASE_URL naming PostgreSQL;
- pooled: the same, DATABASE_URL naming Debian's PgBouncer in transaction mode (scripts/pgbouncer.py) in front of
  that server, and DATABASE_POOLING=transaction.
Each figure is a round's: the ceiling, then direct, then pooled, each for BENCH_SECONDS with 16 connections (wrk when
installed, else Python client processes); the row shown is the round with the median ratio, of BENCH_ROUNDS rounds.
The bench database and its seeded rows are bench.api_reads' (10,000 calls).

Goals (issue 38): pooled within 10% of direct (ratio >= 0.9) for both endpoints; `/v1/me` >= 0.55 of the ceiling,
direct and pooled.
"""

import os
import shutil
import statistics
import sys
from urllib.parse import urlsplit

from bench.api_reads import (
    CLIENTS,
    CONNECTIONS,
    ROOT,
    ROUNDS,
    SECONDS,
    _concurrent,
    _free_port,
    _start_gunicorn,
    _start_redis,
    prepare,
)

sys.path.insert(0, str(ROOT))
from scripts.pgbouncer import executable, from_url  # noqa: E402


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
    from django.conf import settings

    database_url = os.environ["DATABASE_URL"]  # the bench database, set by prepare()
    redis_port = _free_port()
    redis = _start_redis(redis_port)
    pooler = from_url(database_url, pool_size=8).start()
    common = {
        **os.environ,
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "AGENT_RUNTIME_TOKEN": settings.AGENT_RUNTIME_TOKEN or "bench-runtime-token-0123456789-abcdefghijkl",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
    }
    ports = {name: _free_port() for name in ("bare", "direct", "pooled")}
    servers = {}
    try:
        servers["bare"] = _start_gunicorn({**common, "DJANGO_SETTINGS_MODULE": "bench.bare_settings",
                                           "WEB_ACCESS_LOG": ""}, ports["bare"])
        servers["direct"] = _start_gunicorn(common, ports["direct"])
        pooled_url = pooler.url(urlsplit(database_url).path.lstrip("/"))
        servers["pooled"] = _start_gunicorn({**common, "DATABASE_URL": pooled_url, "DATABASE_POOLING": "transaction"},
                                            ports["pooled"])
        auth = {"Authorization": f"Bearer {plaintext}"}
        paths = {"/v1/me": "/v1/me", "calls": "/v1/calls?limit=50"}
        for name in ("direct", "pooled"):  # warm every worker's connection and caches
            for path in paths.values():
                _concurrent(ports[name], path, auth)
        _concurrent(ports["bare"], "/bench/bare", {})
        rounds = {label: [] for label in paths}
        for _ in range(ROUNDS):
            for label, path in paths.items():
                bare = _concurrent(ports["bare"], "/bench/bare", {})
                direct = _concurrent(ports["direct"], path, auth)
                pooled = _concurrent(ports["pooled"], path, auth)
                rounds[label].append({"bare": bare, "direct": direct, "pooled": pooled,
                                      "pooled_vs_direct": pooled["rps"] / direct["rps"]})
    finally:
        for server in servers.values():
            _stop(server)
        pooler.stop()
        redis.kill()

    load = f"wrk, {CONNECTIONS} connections" if shutil.which("wrk") else f"{CLIENTS} Python client processes"
    workers = os.environ.get("WEB_WORKERS", "default")
    print(f"three gunicorns of gunicorn.conf.py ({workers} workers each), one loaded at a time;"
          f" {load}, {SECONDS:.0f} s each; the round with the median pooled/direct ratio of {ROUNDS}")
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
        goals.append((f"{name} pooled >= 0.9 of direct", row["pooled_vs_direct"], row["pooled_vs_direct"] >= 0.9))
        if label == "/v1/me":
            for kind, figures in (("direct", direct), ("pooled", pooled)):
                ratio = figures["rps"] / bare["rps"]
                goals.append((f"/v1/me {kind} >= 0.55 of the bare ceiling", ratio, ratio >= 0.55))
    print("goals: " + "; ".join(f"{name}: {value:.2f} {'OK' if ok else 'MISSED'}" for name, value, ok in goals))


if __name__ == "__main__":
    main()
