"""The one HTTP receiver of the tests: a real server on 127.0.0.1 (random port) in a thread, recording every POST
it gets; webhook subscribers, meeting receivers and any other endpoint the service calls out to are built on it."""

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support.waiting import wait_until


class _Server(ThreadingHTTPServer):
    # A class attribute, as listen() runs in the constructor: the default backlog of 5 overflows when a worker opens
    # its connections all at once, and the kernel resets some of them.
    request_queue_size = 1024
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client gone mid-request (a killed worker, a cut-off attempt) is what several tests cause on purpose


class Receiver:
    """`status` (an int, or a callable(request_dict) -> int, which may also act on the request) decides each answer,
    `reply` is its body; `calls` keeps what arrived."""

    def __init__(self, status=200, headers=None, delay=0.0, port=0, reply=b'{"ok":true}'):
        self.requested_port = port
        self.status = status
        self.reply_headers = headers or {}
        self.delay = delay
        self.reply = reply
        self.calls: list[dict] = []
        self.answered: list[tuple[str, int]] = []  # (webhook-id, status) of every reply fully written
        self.lock = threading.Lock()
        self.server = None

    def __enter__(self):
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                call = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body,
                        "at": time.time()}
                with owner.lock:
                    owner.calls.append(call)
                delay = owner.delay(call) if callable(owner.delay) else owner.delay
                if delay:
                    time.sleep(delay)
                status = owner.status(call) if callable(owner.status) else owner.status
                reply = owner.reply
                self.send_response(status)
                for key, value in owner.reply_headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)
                with owner.lock:
                    owner.answered.append((call["headers"].get("webhook-id"), status))

            def log_message(self, *args):
                pass

        self.server = _Server(("127.0.0.1", self.requested_port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def ids_answered_ok(self) -> set[str]:
        with self.lock:
            return {wid for wid, status in self.answered if 200 <= status < 300}

    def wait_for(self, count: int, timeout: float = 20.0) -> list[dict]:
        wait_until(lambda: len(self.calls) >= count, timeout, lambda: f"{count} calls, got {len(self.calls)}")
        with self.lock:
            return list(self.calls)
