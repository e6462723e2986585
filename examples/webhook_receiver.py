"""A small webhook receiver: verifies Standard Webhooks signatures and stores calls order-independently.

    pip install standardwebhooks
    WEBHOOK_SECRET=whsec_... python examples/webhook_receiver.py --port 9000

Point a subscription at http(s)://<host>:9000/webhooks. Calls are kept in a SQLite file (receiver.sqlite3).
Order independence: `call.recording_ready` arriving before `call.ended` creates the call row with only the recording
flag; the later `call.ended` fills in the rest of that same row (and vice versa). Duplicates (same `webhook-id`)
are acknowledged and ignored.
"""

import argparse
import json
import os
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

SCHEMA = """
create table if not exists seen_events (webhook_id text primary key);
create table if not exists calls (
    call_id text primary key,
    summary text,
    ended_at text,
    disposition text,
    recording_available integer not null default 0
);
"""


class Store:
    def __init__(self, path: str):
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.executescript(SCHEMA)
        self.lock = threading.Lock()

    def handle(self, webhook_id: str, event: dict) -> bool:
        """Applies one event exactly once; False when it was a duplicate."""
        with self.lock, self.db:
            if self.db.execute("insert or ignore into seen_events values (?)", (webhook_id,)).rowcount == 0:
                return False
            data = event["data"]
            if event["type"] == "call.ended":
                # Upsert: fills the row a recording event may have created first; never touches the recording flag.
                self.db.execute(
                    "insert into calls (call_id, summary, ended_at, disposition) values (?, ?, ?, ?) "
                    "on conflict(call_id) do update set summary = excluded.summary, ended_at = excluded.ended_at, "
                    "disposition = excluded.disposition",
                    (data["call_id"], data.get("summary"), data.get("ended_at"), data.get("disposition")),
                )
            elif event["type"] == "call.recording_ready":
                # Creates the row with only the recording flag when call.ended has not arrived yet.
                self.db.execute(
                    "insert into calls (call_id, recording_available) values (?, ?) "
                    "on conflict(call_id) do update set recording_available = excluded.recording_available",
                    (data["call_id"], 1 if data.get("recording_available", True) else 0),
                )
            return True

    def call(self, call_id: str) -> dict | None:
        row = self.db.execute(
            "select call_id, summary, ended_at, disposition, recording_available from calls where call_id = ?",
            (call_id,),
        ).fetchone()
        keys = ("call_id", "summary", "ended_at", "disposition", "recording_available")
        return dict(zip(keys, row, strict=True)) if row else None


def make_server(secret: str, store: Store, host: str = "127.0.0.1", port: int = 9000) -> ThreadingHTTPServer:
    verifier = Webhook(secret)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {key.lower(): value for key, value in self.headers.items()}
            try:
                event = verifier.verify(body, headers)  # verify the raw bytes, before trusting anything in them
            except WebhookVerificationError:
                self.send_response(400)
                self.end_headers()
                return
            store.handle(headers["webhook-id"], event)
            self.send_response(204)  # answer fast; heavy work belongs in a queue of your own
            self.end_headers()

        def log_message(self, *args):
            pass

    return _Server((host, port), Handler)


class _Server(ThreadingHTTPServer):
    # Our workers open several connections at once; the default listen backlog of 5 would make the kernel reset some.
    request_queue_size = 128
    daemon_threads = True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--db", default="receiver.sqlite3")
    args = parser.parse_args()
    server = make_server(os.environ["WEBHOOK_SECRET"], Store(args.db), args.host, args.port)
    print(json.dumps({"listening": f"http://{args.host}:{server.server_address[1]}/webhooks"}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
