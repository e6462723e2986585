"""The HTTP side of a delivery: one POST to a vetted, pinned address, through urllib3 connection pools.

Why urllib3 and not a `requests` session: requests is a layer over these same urllib3 pools, and its per-request
work (preparing the request, merging session settings, hooks, the cookie jar) costs about three times the CPU of
the POST itself; at a thousand deliveries a second that was most of a worker's time. Nothing here needs what that
layer adds: no cookies, no redirects, no proxies, no auth.

Pinning works as in requests-hardened: the pool connects to the address `ssrf.pin_address` vetted for this very
request, while the Host header, the TLS SNI and the certificate's hostname check use the URL's hostname. Pools are
keyed by (scheme, address, port, hostname), so a connection is only ever reused for the same vetted address.
"""

import contextlib
import email.utils
import heapq
import os
import socket
import threading
import time
from dataclasses import dataclass
from functools import lru_cache

import certifi
import urllib3
from django.conf import settings
from urllib3.exceptions import HTTPError, NewConnectionError, SSLError
from urllib3.exceptions import TimeoutError as Urllib3Timeout

from . import conf
from .ssrf import DeliveryRefused, pin_address

USER_AGENT = "VoiceAgent-Webhooks/1.0"


class ResponseTooSlow(Exception):
    """The receiver kept the response going past the total time budget."""


@dataclass
class Outcome:
    status_code: int | None
    body: str
    error: str
    duration_ms: int
    retry_after: float | None = None

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300 and not self.error


@dataclass(frozen=True)
class Target:
    scheme: str
    hostname: str
    port: int
    path: str  # with the query string
    host_header: str


@lru_cache(maxsize=4096)
def parse_target(url: str) -> Target:
    """The parts of a subscription URL a POST needs (cached: a worker sends to the same few URLs over and over)."""
    parts = urllib3.util.parse_url(url)
    scheme = (parts.scheme or "https").lower()
    default_port = 443 if scheme == "https" else 80
    port = parts.port or default_port
    hostname = parts.host.strip("[]")
    host_header = f"[{hostname}]" if ":" in hostname else hostname
    if port != default_port:
        host_header += f":{port}"
    return Target(scheme, hostname, port, parts.request_uri, host_header)


_lock = threading.Lock()  # guards the per-process singletons below: the watchdog and the pool managers


class _Budget:
    """One POST's total time budget. The per-read timeout cannot enforce it (a receiver that sends a byte now and
    then never lets a read time out), so the `_Watchdog` shuts the socket down when the budget runs out, which ends
    any read in progress."""

    __slots__ = ("deadline", "sock", "done", "expired")

    def __init__(self, deadline: float):
        self.deadline, self.sock, self.done, self.expired = deadline, None, False, False

    def __lt__(self, other):
        return self.deadline < other.deadline

    def expire(self) -> None:
        self.expired = True
        if self.sock is not None:
            with contextlib.suppress(OSError):  # the raw fd: safe under a TLS read in progress
                socket.socket.shutdown(self.sock, socket.SHUT_RDWR)


class _Watchdog:
    """One thread per process that expires the budgets of POSTs still running at their deadline."""

    def __init__(self):
        self.pid = os.getpid()
        self.cond = threading.Condition()
        self.heap: list[_Budget] = []
        threading.Thread(target=self._run, name="webhook-deadlines", daemon=True).start()

    def watch(self, deadline: float) -> _Budget:
        budget = _Budget(deadline)
        with self.cond:
            heapq.heappush(self.heap, budget)
            if self.heap[0] is budget:
                self.cond.notify()
        return budget

    def _run(self):
        while True:
            with self.cond:
                while self.heap and self.heap[0].done:
                    heapq.heappop(self.heap)
                if not self.heap:
                    self.cond.wait()
                    continue
                wait = self.heap[0].deadline - time.monotonic()
                if wait > 0:
                    self.cond.wait(wait)
                    continue
                # Under the lock, so a POST that has just finished (`finish`) never has its next socket shut down.
                heapq.heappop(self.heap).expire()

    def finish(self, budget: _Budget) -> None:
        with self.cond:
            budget.done = True


_watchdogs: dict = {}
_current = threading.local()  # the budget of the POST this thread is sending


def _watchdog() -> _Watchdog:
    with _lock:
        watchdog = _watchdogs.get("w")
        if watchdog is None or watchdog.pid != os.getpid():  # threads do not survive a fork
            watchdog = _watchdogs["w"] = _Watchdog()
    return watchdog


class _BudgetedConnectionMixin:
    """Hands each socket this connection opens or reuses to the current POST's budget."""

    def _new_conn(self):
        sock = super()._new_conn()
        _attach(sock)
        return sock

    def connect(self):
        super().connect()
        _attach(self.sock)  # after TLS, the wrapped socket

    def request(self, *args, **kwargs):
        if self.sock is not None:
            _attach(self.sock)  # a kept-alive connection
        return super().request(*args, **kwargs)


def _attach(sock) -> None:
    budget = getattr(_current, "budget", None)
    if budget is not None:
        budget.sock = sock
        if budget.expired:
            budget.expire()


class _HTTPConnection(_BudgetedConnectionMixin, urllib3.connection.HTTPConnection):
    pass


class _HTTPSConnection(_BudgetedConnectionMixin, urllib3.connection.HTTPSConnection):
    pass


class _HTTPPool(urllib3.HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


_managers: dict = {}


def _manager() -> urllib3.PoolManager:
    """This process's pools (an LRU of at most 256 endpoints; the oldest is closed when a new one is needed). Created
    lazily, so after the worker's fork. Each pool keeps up to WEBHOOK_SEND_THREADS idle keep-alive connections."""
    # The pid too: pools (and their sockets) must never be shared across a fork.
    key = (os.getpid(), conf.send_threads(), getattr(settings, "WEBHOOK_CA_BUNDLE", None) or certifi.where())
    with _lock:
        manager = _managers.get(key)
        if manager is None:
            manager = _managers[key] = urllib3.PoolManager(
                num_pools=256,
                maxsize=key[1],
                block=False,
                cert_reqs="CERT_REQUIRED",
                ca_certs=key[2],
                retries=False,
            )
            manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
    return manager


def post(url: str, body: bytes, headers: dict[str, str], *, timeout: float | None = None) -> Outcome:
    """One POST: 2 s to connect, 15 s in all (or `timeout`, when shorter), no redirects, no retries; keeps the
    first 2 KB of the reply as text. Never raises: a failure is an Outcome with `error` set and no status code."""
    started = time.monotonic()
    total = conf.TOTAL_TIMEOUT if timeout is None else max(0.001, min(timeout, conf.TOTAL_TIMEOUT))
    watchdog = _watchdog()
    budget = _current.budget = watchdog.watch(started + total)
    response = None
    try:
        target = parse_target(url)
        address = pin_address(target.hostname, target.port, scheme=target.scheme)
        pool = _manager().connection_from_host(
            address,
            port=target.port,
            scheme=target.scheme,
            pool_kwargs={"server_hostname": target.hostname, "assert_hostname": target.hostname}
            if target.scheme == "https"
            else None,
        )
        response = pool.urlopen(
            "POST",
            target.path,
            body=body,
            headers={**headers, "Host": target.host_header},
            retries=False,
            redirect=False,
            preload_content=False,
            timeout=urllib3.Timeout(connect=min(conf.CONNECT_TIMEOUT, total), read=total),
        )
        kept = b""
        for chunk in response.stream(8192):
            if len(kept) < conf.RESPONSE_KEEP_BYTES:
                kept += chunk[: conf.RESPONSE_KEEP_BYTES - len(kept)]
        if budget.expired:  # the watchdog cut the body short
            raise ResponseTooSlow()
        status, retry_after_header = response.status, response.headers.get("Retry-After")
        response.release_conn()
        response = None
    except Exception as exc:  # noqa: BLE001 - every failure is logged on the attempt, none may stop the batch
        if response is not None:
            response.close()  # half-read: the connection cannot be reused
        error = describe(ResponseTooSlow() if budget.expired else exc, total=total)
        return Outcome(None, "", error[:1000], _ms_since(started))
    finally:
        watchdog.finish(budget)
        _current.budget = None
    error = ""
    if 300 <= status < 400:
        error = "Redirect not followed"
    elif not 200 <= status < 300:
        error = f"HTTP {status}"
    retry_after = _retry_after(retry_after_header) if status in conf.RETRY_AFTER_STATUSES else None
    # Text as the log shows it: undecodable bytes and NULs (which a PostgreSQL text column refuses) replaced.
    excerpt = kept.decode("utf-8", "replace").replace("\x00", "\ufffd")
    return Outcome(status, excerpt, error, _ms_since(started), retry_after)


def describe(exc: Exception, *, total: float | None = None) -> str:
    """The attempt log's one-line account of a failed POST, led by its kind: Timeout, SSLError, ConnectionError,
    or the refusal itself (BlockedAddress, UnresolvableHost)."""
    if isinstance(exc, DeliveryRefused):
        return f"{type(exc).__name__}: {exc}"
    if isinstance(exc, NewConnectionError):  # a subclass of ConnectTimeoutError, but a refusal or unreachable host
        return f"ConnectionError: {_root_cause(exc)}"
    if isinstance(exc, (Urllib3Timeout, ResponseTooSlow)):
        total = conf.TOTAL_TIMEOUT if total is None else total
        if isinstance(exc, urllib3.exceptions.ConnectTimeoutError):
            return f"Timeout: no connection within {min(conf.CONNECT_TIMEOUT, total):g} s"
        return f"Timeout: no complete response within {round(total, 1):g} s"
    if isinstance(exc, SSLError):
        return f"SSLError: {_root_cause(exc)}"
    if isinstance(exc, (HTTPError, OSError)):
        return f"ConnectionError: {_root_cause(exc)}"
    return f"{type(exc).__name__}: {exc}"


def _root_cause(exc: BaseException) -> str:
    """The innermost reason (urllib3 wraps the socket error, which is what a subscriber can act on)."""
    for _ in range(5):
        wrapped = exc.args[-1] if exc.args and isinstance(exc.args[-1], BaseException) else None
        inner = exc.__cause__ or wrapped
        if inner is None or inner is exc:
            break
        exc = inner
    return str(exc) or type(exc).__name__


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date), capped; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), conf.MAX_RETRY_AFTER)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return min(max(0.0, when.timestamp() - time.time()), conf.MAX_RETRY_AFTER)


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
