"""Redis behind Sentinel (README "Redis with Sentinel"): the settings' parsing of REDIS_SENTINELS, and Django's Redis
cache asking Sentinel for the current primary.

The cache (and the counters and flags of core/counters.py, which share its connection pool) connects through
redis-py's SentinelConnectionPool: each new connection asks the sentinels which server is the primary, and a
connection to a primary that was demoted (READONLY) or went away is dropped and the next one goes to the new
primary. No restart: the first command after a failover fails (counters count in the process for a second,
core/counters.py), the ones after it reach the new primary. The broker uses kombu's own sentinel transport
(settings: `sentinel://` URLs and `master_name`).
"""

import re

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.sentinel import Sentinel

_ADDRESS = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9_.-]+)):(?P<port>[0-9]{1,5})$")


def parse_sentinels(value: str) -> list[tuple[str, int]]:
    """`host:port,host:port` (an IPv6 address in brackets) as [(host, port)]; ValueError saying what is wrong."""
    addresses = []
    for item in value.split(","):
        match = _ADDRESS.match(item.strip())
        if not match or not 0 < int(match["port"]) < 65536:
            raise ValueError(f"{item.strip()!r} is not host:port")
        addresses.append((match["v6"] or match["host"], int(match["port"])))
    return addresses


class SentinelCacheClient(RedisCacheClient):
    """RedisCacheClient whose one pool is a SentinelConnectionPool for the primary (reads too: a replica may lag
    behind a revocation or a counter)."""

    def __init__(self, servers, *, sentinels, master, db=0, sentinel_timeout=0.5, **options):
        super().__init__(servers, **options)
        self._sentinel = Sentinel(
            sentinels,
            sentinel_kwargs={"socket_timeout": sentinel_timeout, "socket_connect_timeout": sentinel_timeout},
        )
        self._master = master
        self._db = db

    def _get_connection_pool(self, write):
        pool = self._pools.get(0)
        if pool is None:
            pool = self._pools[0] = self._sentinel.master_for(
                self._master, db=self._db, **self._pool_options
            ).connection_pool
        return pool


class SentinelRedisCache(RedisCache):
    """Django's RedisCache over SentinelCacheClient; OPTIONS carry `sentinels`, `master` and `db`."""

    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = SentinelCacheClient
