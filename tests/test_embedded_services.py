"""A bare machine runs on real PostgreSQL and Redis: scripts/embedded.py starts both when the environment names
neither, hands their addresses to the command, and stops them after it."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import json, os, pathlib, psycopg, redis
with psycopg.connect(os.environ["DATABASE_URL"]) as conn:
    version = conn.execute("SHOW server_version_num").fetchone()[0]
    extensions = [row[0] for row in conn.execute(
        "SELECT name FROM pg_available_extensions WHERE name IN ('pg_trgm', 'btree_gist') ORDER BY name")]
addresses = pathlib.Path(os.environ["EMBEDDED_VAR_DIR"], "embedded.env").read_text()
print(json.dumps({"database_url": os.environ["DATABASE_URL"], "redis_url": os.environ["REDIS_URL"],
                  "server_version_num": int(version), "extensions": extensions,
                  "redis_ping": redis.Redis.from_url(os.environ["REDIS_URL"]).ping(), "addresses": addresses}))
"""


def test_without_database_url_and_redis_url_the_command_gets_embedded_servers_which_stop_after_it(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["EMBEDDED_VAR_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "scripts/embedded.py", "--", sys.executable, "-c", PROBE],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["server_version_num"] >= 180000
    assert seen["extensions"] == ["btree_gist", "pg_trgm"]
    assert seen["redis_ping"] is True
    assert seen["addresses"] == f"DATABASE_URL={seen['database_url']}\nREDIS_URL={seen['redis_url']}\n"
    # Stopped with the command: the Redis port refuses, the socket and the addresses file are gone.
    redis_port = urlsplit(seen["redis_url"]).port
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", redis_port)) != 0
    assert not (tmp_path / "embedded.env").exists()
    assert not list((tmp_path / "postgres").glob(".s.PGSQL.*"))


def test_with_both_urls_set_nothing_embedded_starts(tmp_path):
    env = {**os.environ, "DATABASE_URL": "postgres://example.invalid/db", "REDIS_URL": "redis://example.invalid/0",
           "EMBEDDED_VAR_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "scripts/embedded.py", "--", sys.executable, "-c",
         "import os; print(os.environ['DATABASE_URL'], os.environ['REDIS_URL'])"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["postgres://example.invalid/db", "redis://example.invalid/0"]
    assert list(tmp_path.iterdir()) == []


def test_the_command_s_exit_status_is_the_wrapper_s(tmp_path):
    env = {**os.environ, "EMBEDDED_VAR_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "scripts/embedded.py", "--", sys.executable, "-c", "raise SystemExit(3)"],
                          cwd=ROOT, env=env, timeout=60)
    assert done.returncode == 3


def test_a_second_command_joins_the_running_embedded_redis_and_leaves_its_addresses_file(tmp_path):

    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["EMBEDDED_VAR_DIR"] = str(tmp_path)
    addresses_file = tmp_path / "embedded.env"
    first = subprocess.Popen([sys.executable, "scripts/embedded.py", "--", sys.executable, "-c",
                              "import time; time.sleep(120)"], cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    try:
        wait_until(addresses_file.exists, 60, f"{addresses_file} written", interval=0.1)
        written = addresses_file.read_text()
        done = subprocess.run(
            [sys.executable, "scripts/embedded.py", "--", sys.executable, "-c",
             "import os, redis; print(os.environ['REDIS_URL'], redis.Redis.from_url(os.environ['REDIS_URL']).ping())"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )
        assert done.returncode == 0, done.stderr
        url, ping = done.stdout.split()
        assert f"REDIS_URL={url}\n" in written and ping == "True"  # the first run's Redis, not one of its own
        assert addresses_file.read_text() == written  # still there for a third terminal
    finally:
        first.terminate()
        first.wait(30)
    assert not addresses_file.exists()
