"""A Redis proxy on loopback that forwards one command at a time and runs a hook between two: what another client
(or the clock, expiring a key) could do between the commands of a pipeline. Each command is sent only after the
answer to the one before it has come back, so what the hook does lands exactly between them."""

import contextlib
import socket
import threading


def _read_line(reader) -> bytes:
    line = reader.readline()
    if not line.endswith(b"\r\n"):
        raise ConnectionError("closed")
    return line


def read_message(reader) -> tuple[bytes, object]:
    """One RESP2 or RESP3 message: its raw bytes and its value (bulk strings as bytes, aggregates as lists: a map
    as its keys and values in turn)."""
    line = _read_line(reader)
    kind, rest = line[:1], line[1:-2]
    if kind in (b"+", b"-", b":", b"_", b"#", b",", b"("):
        return line, rest
    if kind in (b"$", b"=", b"!"):
        size = int(rest)
        if size < 0:
            return line, None
        data = reader.read(size + 2)
        if len(data) < size + 2:
            raise ConnectionError("closed")
        return line + data, data[:-2]
    if kind == b"|":  # an attribute, then the message it describes
        raw, _ = _aggregate(reader, line, 2 * int(rest))
        more, value = read_message(reader)
        return raw + more, value
    if kind in (b"*", b"~", b">", b"%"):
        count = int(rest) * (2 if kind == b"%" else 1)
        return _aggregate(reader, line, count)
    raise ConnectionError(f"not RESP: {line[:20]!r}")


def _aggregate(reader, line: bytes, count: int) -> tuple[bytes, object]:
    raw, items = [line], []
    for _ in range(max(0, count)):
        part, value = read_message(reader)
        raw.append(part)
        items.append(value)
    return b"".join(raw), (items if count >= 0 else None)


class SteppingRedisProxy:
    """`hook(command)` runs after each command ran, before its answer goes back to the client (so before the next);
    `command` is the list of its arguments (bytes). `commands` records every command forwarded."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.hook = None
        self.commands: list[list[bytes]] = []
        self.port = None
        self._listener = None
        self._sockets: list[socket.socket] = []

    def __enter__(self) -> "SteppingRedisProxy":
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target, timeout=10)
            self._sockets += [client, upstream]
            threading.Thread(target=self._serve, args=(client, upstream), daemon=True).start()

    def _serve(self, client, upstream) -> None:
        requests, replies = client.makefile("rb"), upstream.makefile("rb")
        try:
            while True:
                raw, command = read_message(requests)
                self.commands.append(command)
                upstream.sendall(raw)
                reply = read_message(replies)[0]
                if self.hook is not None:  # before the client has the answer: it sees all the hook did
                    self.hook(command)
                client.sendall(reply)
        except (ConnectionError, OSError, ValueError):
            pass
        finally:
            for sock in (client, upstream):
                with contextlib.suppress(OSError):
                    sock.close()
