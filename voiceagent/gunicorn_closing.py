"""How gunicorn's workers close a connection: as gunicorn does (RFC 9112 section 9.6: a FIN, then reading until the
client closes, so unread request data does not turn the close into a reset that truncates the response), lingering
only while the client is still sending.

gunicorn's own close (`gunicorn.util.close_graceful`) waits up to 2 s for the client to close. A client that reads
its response and keeps the connection open (one that stalls, on purpose or not) held a sync worker for those 2 s
after every request, however cheap: an organization's throttled or refused requests took the workers another
organization's requests needed (tests/ops/test_gunicorn.py). A client that sends nothing more within QUIET_SECONDS
has nothing left for a reset to cut: its connection closes at once.
"""

import socket
import time

from gunicorn import util

QUIET_SECONDS = 0.05


def close_graceful(sock, timeout: float = 2.0, max_drain: int = 65536) -> None:
    """gunicorn.util.close_graceful, except that a client quiet for QUIET_SECONDS after the FIN is not waited for."""
    try:
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            return
        deadline = time.monotonic() + timeout
        drained = 0
        wait = min(QUIET_SECONDS, timeout)
        while drained < max_drain:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                sock.settimeout(min(wait, remaining))
                data = sock.recv(4096)
            except (TimeoutError, OSError):
                break
            if not data:
                break
            drained += len(data)
            wait = remaining  # still sending: read until it closes, as gunicorn does
    finally:
        util.close(sock)


def install() -> None:
    """This worker (sync or gthread) closes through close_graceful above: gunicorn.conf.py's post_fork."""
    util.close_graceful = close_graceful
