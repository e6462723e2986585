"""`python -m bench.profile_api [PATH ...]`: where one /v1 request's own Python goes, without the network.

Serves N requests per path (BENCH_PROFILE_REQUESTS, default 2,000) through Django's WSGI handler in this process,
against the bench database and the real Redis, under cProfile, and prints the top entries by own time and the
microseconds per request of the whole handler. The server and client sockets are left out on purpose: gunicorn and
the network cost the same for the bare view, and `bench.api_reads` measures them.
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
    for path in paths or ["/v1/me", "/v1/calls?limit=50", "/bench/bare"]:
        _serve(handler, path, plaintext, 200)  # warm: the URL resolver, the key cache, the connection
        started = time.perf_counter()
        _serve(handler, path, plaintext, REQUESTS)
        plain = (time.perf_counter() - started) / REQUESTS
        profile = cProfile.Profile()
        profile.enable()
        _serve(handler, path, plaintext, REQUESTS)
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).strip_dirs().sort_stats(sort).print_stats(lines)
        print(f"== {path}: {plain * 1e6:.0f} us per request in the handler (unprofiled)")
        print("\n".join(line for line in out.getvalue().splitlines()[6:] if line.strip()))


if __name__ == "__main__":
    main(sys.argv[1:])
