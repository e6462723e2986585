"""The one way a test waits for something another thread or process does: poll a condition, never sleep and hope."""

import socket
import time


def wait_until(predicate, timeout: float = 30.0, message="the condition", interval: float = 0.05):
    """Calls `predicate` until it returns something true, and returns that. After `timeout` seconds fails with
    `message` (a string, or a callable giving one when it fails, to report the state at that moment)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"not true after {timeout} s: {message() if callable(message) else message}")
        time.sleep(interval)


def listening(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts connections on `port` (a server started in a subprocess is up)."""
    with socket.socket() as s:
        return s.connect_ex((host, port)) == 0
