"""An S3-compatible server on a free loopback port (moto's server mode, installed from PyPI as a test dependency),
with a bucket: what the recording-storage tests and the cluster drill store recordings in.

    with S3Server(bucket="recordings") as s3:
        env = s3.env()          # RECORDINGS_STORAGE_URL and the credentials for a server or worker process

    python scripts/s3server.py --bucket recordings      # runs until interrupted, printing RECORDINGS_STORAGE_URL
"""

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REGION = "us-east-1"
# moto accepts any credentials; these only have to be the same on every node.
ACCESS_KEY_ID = "test-access-key-id"
SECRET_ACCESS_KEY = "test-secret-access-key"  # noqa: S105 - a local test server's


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class S3Server:
    def __init__(self, *, bucket: str = "recordings", port: int | None = None):
        self.bucket = bucket
        self.port = port or _free_port()
        self.process: subprocess.Popen | None = None
        self.log_path = Path(tempfile.mkdtemp(prefix="s3server-")) / "moto.log"

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def storage_url(self) -> str:
        return f"s3://{self.bucket}?endpoint_url={self.endpoint_url}&region={REGION}"

    def env(self) -> dict:
        return {"RECORDINGS_STORAGE_URL": self.storage_url, "AWS_ACCESS_KEY_ID": ACCESS_KEY_ID,
                "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY}

    def client(self):
        import boto3  # noqa: PLC0415 - only where S3 is used

        return boto3.client("s3", endpoint_url=self.endpoint_url, region_name=REGION,
                            aws_access_key_id=ACCESS_KEY_ID, aws_secret_access_key=SECRET_ACCESS_KEY)

    def keys(self) -> list[str]:
        return [item["Key"] for item in self.client().list_objects_v2(Bucket=self.bucket).get("Contents", [])]

    def start(self) -> "S3Server":
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(  # noqa: S603 - our own interpreter, fixed arguments
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    break
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the S3 server did not start:\n{self.log_path.read_text()[-3000:]}")
            time.sleep(0.05)
        self.client().create_bucket(Bucket=self.bucket)
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None
        with contextlib.suppress(AttributeError):
            self._log.close()

    def __enter__(self) -> "S3Server":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bucket", default="recordings")
    parser.add_argument("--port", type=int)
    args = parser.parse_args()
    with S3Server(bucket=args.bucket, port=args.port) as server:
        for name, value in server.env().items():
            print(f"{name}={value}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.sigwait({signal.SIGINT, signal.SIGTERM})
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
