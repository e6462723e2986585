"""How far `/v1/me` can come towards the stack's ceiling (issue 38's goal: >= 0.55 of it): a ladder of servers under
the same gunicorn command (gunicorn.conf.py's workers and worker class), each rung's requests/s as a ratio of the
ceiling's:
1. the ceiling: a bare Django JSON view, no middleware, no access log (bench/bare_settings.py, as bench.pooling);
2. the same plus the one Redis round trip every /v1 request makes (a key's epoch and two rate limits in one EVALSHA,
   core/counters.py), no middleware, no access log (bench/floor_settings.py);
3. the same answered by a DRF view with the project's DRF settings and no authentication: DRF's floor;
4. `/v1/me` as served: the project's middleware, authentication, headers and access log;
5. `/v1/me` without the access log (WEB_ACCESS_LOG=""), so its share is a figure of its own.
wrk with 16 connections, BENCH_SECONDS each, rungs taking turns in each of BENCH_ROUNDS rounds (this machine's
speed drifts within a minute); each ratio is the median of the rounds' ratios to the ceiling's run in the same round.
Rungs 2 and 3 say what no project code can beat while the API keeps DRF and checks each request in Redis (a revoked
key fails on its next request, rate limits hold across nodes).
"""

import os
import statistics
import tempfile
from pathlib import Path

from bench.api_reads import ROUNDS, _concurrent, _free_port, _start_redis, prepare
from bench.pooling import _answers, _start, _stop, server_env

RUNGS = (
    ("bare Django view (the ceiling)", "bare", "/bench/bare"),
    ("+ the Redis round trip, plain Django", "floor", "/floor/django-redis"),
    ("+ DRF (no authentication)", "floor", "/floor/drf-redis"),
    ("GET /v1/me as served", "project", "/v1/me"),
    ("GET /v1/me, no access log", "quiet", "/v1/me"),
)


def main():
    org, plaintext, _ = prepare()
    redis_port = _free_port()
    redis = _start_redis(redis_port)
    common = server_env(redis_port)
    environments = {
        "bare": {"DJANGO_SETTINGS_MODULE": "bench.bare_settings", "WEB_ACCESS_LOG": ""},
        "floor": {"DJANGO_SETTINGS_MODULE": "bench.floor_settings", "WEB_ACCESS_LOG": ""},
        "project": {},
        "quiet": {"WEB_ACCESS_LOG": ""},
    }
    logs = Path(tempfile.mkdtemp(prefix="bench-floor-"))
    ports, servers = {}, {}
    auth = {"Authorization": f"Bearer {plaintext}"}
    rates = {label: [] for label, _, _ in RUNGS}
    try:
        for name, extra in environments.items():
            ports[name] = _free_port()
            servers[name] = _start({**common, **extra}, ports[name], logs / f"{name}.log")
        for _label, server, path in RUNGS:
            _answers(ports[server], path, auth, logs / f"{server}.log")
            _concurrent(ports[server], path, auth)  # warm every worker
        for _ in range(ROUNDS):
            for label, server, path in RUNGS:
                row = _concurrent(ports[server], path, auth)
                if row["errors"]:
                    raise RuntimeError(f"{label}: {row['errors']} errors")
                rates[label].append(row["rps"])
    finally:
        for server in servers.values():
            _stop(server)
        redis.kill()

    ceiling = rates[RUNGS[0][0]]
    print(f"gunicorn.conf.py ({os.environ.get('WEB_WORKERS', 'default')} workers), wrk 16 connections, "
          f"{ROUNDS} rounds; load {' / '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'rung':40} {'req/s (median)':>15} {'of the ceiling':>15}   per round")
    for label, _, _ in RUNGS:
        ratios = [rate / bare for rate, bare in zip(rates[label], ceiling, strict=True)]
        print(f"{label:40} {statistics.median(rates[label]):15.0f} {statistics.median(ratios):15.2f}   "
              f"{', '.join(f'{r:.2f}' for r in ratios)}")


if __name__ == "__main__":
    main()
