"""`python -m bench.profile_api [PATH ...]`: where one /v1 request's own Python goes, without the network.

Serves N requests per path (BENCH_PROFILE_REQUESTS, default 2,000) through Django's WSGI handler in this process,
against the bench database and the real Redis, under cProfile, and prints the top entries by own time and the
microseconds per request of the whole handler. The server and client sockets are left out on purpose: gunicorn and
the network cost the same for the bare view, and `bench.api_reads` measures them.

BENCH_PROFILE_CPU=1 profiles on this process's CPU clock (time.process_time) instead of the wall clock, and times
the unprofiled run on it too: on a shared machine, the wall clock counts every moment another process held the core
(a Redis round trip that wakes redis-server showed as 0.4 ms in `sendall`), the CPU clock only this process's work,
the kernel's part of its system calls included.

Each path's line also gives the Python calls per request (cProfile's count): unlike the time, it is the same on a
busy machine as on a quiet one.
"""

import cProfile
import io
import os
import pstats
import sys
import time

REQUESTS = int(os.environ.get("BENCH_PROFILE_REQUESTS", 2000))


def _environ(path: str, key: str) -> dict:
    route, _, query = path.partition("?")
    return {
        "REQUEST_METHOD": "GET", "PATH_INFO": route, "QUERY_STRING": query, "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000", "HTTP_HOST": "127.0.0.1", "REMOTE_ADDR": "127.0.0.1", "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""), "wsgi.errors": sys.stderr, "HTTP_AUTHORIZATION": f"Bearer {key}",
    }


def _serve(handler, path: str, key: str, n: int) -> None:
    for _ in range(n):
        status = []
        body = b"".join(handler(_environ(path, key), lambda line, headers, status=status: status.append(line)))
        assert status[0].startswith("200"), (status, body[:200])


def main(paths=None):
    from bench.api_reads import prepare

    org, plaintext, _ = prepare()
    from django.core.handlers.wsgi import WSGIHandler

    handler = WSGIHandler()
    sort, lines = os.environ.get("BENCH_PROFILE_SORT", "tottime"), int(os.environ.get("BENCH_PROFILE_LINES", 18))
    clock = time.process_time if os.environ.get("BENCH_PROFILE_CPU") else time.perf_counter
    for path in paths or ["/v1/me", "/v1/calls?limit=50", "/bench/bare"]:
        _serve(handler, path, plaintext, 200)  # warm: the URL resolver, the key cache, the connection
        started = clock()
        _serve(handler, path, plaintext, REQUESTS)
        plain = (clock() - started) / REQUESTS
        profile = cProfile.Profile(clock)
        profile.enable()
        _serve(handler, path, plaintext, REQUESTS)
        profile.disable()
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out)
        stats.strip_dirs().sort_stats(sort).print_stats(lines)
        kind = " of CPU" if clock is time.process_time else ""
        # The calls count does not drift with the machine's load as the time does: two versions compare on it alone.
        print(f"== {path}: {plain * 1e6:.0f} us{kind} per request in the handler (unprofiled; load "
              f"{os.getloadavg()[0]:.1f}); {stats.total_calls / REQUESTS:.0f} Python calls per request")
        print("\n".join(line for line in out.getvalue().splitlines()[6:] if line.strip()))


if __name__ == "__main__":
    main(sys.argv[1:])
