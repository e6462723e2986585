"""gunicorn's settings, read by every gunicorn started from the project root (`make run`'s Procfile, the bench).
Each from the environment, with the defaults `make run` uses."""

import os

# Two processes per core, two threads each: on this project's 2-core bench machine 4 x 2 served the call list at
# 767-875 req/s against 347-592 for 2 x 4, and the bare view's p99 at 16 connections fell from 43-57 ms to 10-18 ms
# (fewer threads per process contend less for its GIL). README "Benchmarks".
workers = int(os.environ.get("WEB_WORKERS", str(2 * (os.cpu_count() or 1))))
threads = int(os.environ.get("WEB_THREADS", "2"))
timeout = int(os.environ.get("WEB_TIMEOUT", "30"))  # a worker stuck longer is restarted
graceful_timeout = int(os.environ.get("WEB_GRACEFUL_TIMEOUT", "30"))
keepalive = int(os.environ.get("WEB_KEEPALIVE", "5"))
# gunicorn's maximum: the service answers URLs over settings.MAX_URL_LENGTH (4,096) with a JSON 414 itself.
limit_request_line = 8190
# The access log writes the path without its query string (%(U)s): recording tokens travel in the query string,
# and keys in a header that is never logged.
accesslog = "-"
access_log_format = '%(h)s "%(m)s %(U)s" %(s)s %(b)sB %(M)sms request_id=%({x-request-id}o)s'


def child_exit(server, worker):
    """With PROMETHEUS_MULTIPROC_DIR set, a dead worker's counters stop counting as live (prometheus-client)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess  # noqa: PLC0415 - only when the multiprocess mode is on

        multiprocess.mark_process_dead(worker.pid)

