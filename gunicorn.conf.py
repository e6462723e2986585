"""gunicorn's settings, read by every gunicorn started from the project root (`make run`'s Procfile, the bench).
Each from the environment, with the defaults `make run` uses."""

import os

# Two processes per core, one request each (gunicorn's sync worker): a worker accepts a connection only when it is
# idle, so load spreads evenly: the call list's p99 at 16 connections was lower this way than for the same processes
# with keep-alive (gthread), where a connection stays pinned to a worker whether it is busy or not, and 2 threads
# each was worse still (GIL hand-offs; docs/benchmarks.md#figures-behind-the-code).
# No keep-alive, and a slow client holds a worker: production puts a buffering proxy (nginx) in front, which it
# needs anyway. WEB_THREADS above 1 switches to the gthread worker, keep-alive included, for serving without one.
workers = int(os.environ.get("WEB_WORKERS", str(2 * (os.cpu_count() or 1))))
threads = int(os.environ.get("WEB_THREADS", "1"))
worker_class = "gthread" if threads > 1 else "sync"
timeout = int(os.environ.get("WEB_TIMEOUT", "30"))  # a worker stuck longer is restarted
graceful_timeout = int(os.environ.get("WEB_GRACEFUL_TIMEOUT", "30"))
keepalive = int(os.environ.get("WEB_KEEPALIVE", "5"))  # gthread only: the sync worker closes each connection
# gunicorn's maximum: the service answers URLs over settings.MAX_URL_LENGTH (4,096) with a JSON 414 itself.
limit_request_line = 8190
# The access log writes the path without its query string (%(U)s): recording tokens travel in the query string,
# and keys in a header that is never logged.
accesslog = os.environ.get("WEB_ACCESS_LOG", "-") or None  # "" turns it off (the bench's bare ceiling)
access_log_format = '%(h)s "%(m)s %(U)s" %(s)s %(b)sB %(M)sms request_id=%({x-request-id}o)s'
# Invitation and password-reset links carry their token in the path: both gunicorn logs go through the project's
# redaction (voiceagent/logging.py).
logger_class = "voiceagent.gunicorn_logging.ScrubbingLogger"


def node_id(addresses) -> str:
    """`host:port` of the first TCP address gunicorn binds (the socket's path for a Unix socket)."""
    import socket  # noqa: PLC0415 - only when a worker starts

    first = addresses[0] if addresses else ""
    where = first[1] if isinstance(first, tuple) else first
    return f"{socket.gethostname()}:{where}"


def post_fork(server, worker):
    """The worker count as gunicorn settled it (a `--workers` on the command line included) for the application's
    settings.WEB_WORKERS, which bounds the share of workers test deliveries may hold (webhooks.probe), and the node's
    NODE_ID; the worker's liveness signal for long responses (core/liveness.py); and its way of closing connections
    (voiceagent/gunicorn_closing.py)."""
    os.environ["WEB_WORKERS"] = str(server.cfg.workers)
    # The node's name in per-node keys (settings.NODE_ID): the host and the port this gunicorn listens on, so two
    # gunicorns on one machine are two nodes; a NODE_ID set in the environment wins.
    if not os.environ.get("NODE_ID"):
        os.environ["NODE_ID"] = node_id(getattr(server.cfg, "address", None) or [])
    # A long streamed response (a CSV export) beats as it makes progress, so the timeout ends stuck workers only.
    from core import liveness  # noqa: PLC0415 - in the worker, after the fork

    liveness.set_notify(worker.notify)
    # A client that keeps its connection open after its response does not hold the worker (2 s with gunicorn's close).
    from voiceagent import gunicorn_closing  # noqa: PLC0415 - in the worker, after the fork

    gunicorn_closing.install()


def child_exit(server, worker):
    """With PROMETHEUS_MULTIPROC_DIR set, a dead worker's counters stop counting as live (prometheus-client)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess  # noqa: PLC0415 - only when the multiprocess mode is on

        multiprocess.mark_process_dead(worker.pid)

